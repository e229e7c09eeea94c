/*
Copyright 2026 The enhanced-liveness-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

// HoldReason says why the decision controller held a restart. The values are part of the API:
// they appear in the policy status (heldByReason, workloads[].heldReason), as the note's prefix
// and the action of a pod's RestartHeld events, and as the reason label of the metric
// enhanced_liveness_restarts_held_total.
// +kubebuilder:validation:Enum=DaemonNotReporting;Disabled;DryRun;Blacklisted;FailureStorm;NodeStorm;RestartIneffective;MaxUnavailable;RateLimited
type HoldReason string

const (
	// HoldDaemonNotReporting: the node's daemon is not reporting (its Lease is missing or
	// expired), or the failed result is no evidence (taken before the daemon's current start, or
	// no longer refreshed by it).
	HoldDaemonNotReporting HoldReason = "DaemonNotReporting"
	// HoldDisabled: the pod's restart-disabled annotation or the manager-wide switch
	// (--restarts=disabled) forbids restarts.
	HoldDisabled HoldReason = "Disabled"
	// HoldDryRun: a governing policy is in DryRun mode; the restart would have been made.
	HoldDryRun HoldReason = "DryRun"
	// HoldBlacklisted: a governing policy's blacklist covers the workload, the pod or the
	// container.
	HoldBlacklisted HoldReason = "Blacklisted"
	// HoldFailureStorm: more pods of the workload, or of its newest revision, are failing or
	// starting to fail than maxFailing, or such a storm has not settled yet.
	HoldFailureStorm HoldReason = "FailureStorm"
	// HoldNodeStorm: pods of several workloads fail on the pod's node at once, more than the
	// node-storm limit, or such a storm has not settled yet.
	HoldNodeStorm HoldReason = "NodeStorm"
	// HoldRestartIneffective: the workload's recent restarts did not help: most of the
	// restarted containers failed their probe again soon after the restart.
	HoldRestartIneffective HoldReason = "RestartIneffective"
	// HoldMaxUnavailable: maxUnavailable pods of the workload are unavailable already.
	HoldMaxUnavailable HoldReason = "MaxUnavailable"
	// HoldRateLimited: the manager-wide token bucket or a governing policy's has no token.
	HoldRateLimited HoldReason = "RateLimited"
)

// HoldReasons lists every hold reason in the order of the decision.
var HoldReasons = []HoldReason{
	HoldDaemonNotReporting, HoldDisabled, HoldDryRun, HoldBlacklisted,
	HoldFailureStorm, HoldNodeStorm, HoldRestartIneffective, HoldMaxUnavailable, HoldRateLimited,
}
