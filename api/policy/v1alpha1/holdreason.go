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
// +kubebuilder:validation:Enum=DaemonNotReporting;Disabled;Shadow;DryRun;Blacklisted;FailureStorm;NodeStorm;RestartIneffective;MaxUnavailable;RateLimited
type HoldReason string

const (
	// HoldDaemonNotReporting: the node's daemon is not reporting (its Lease is missing or
	// expired), or the failed result is no evidence (taken before the daemon's current start, or
	// no longer refreshed by it).
	HoldDaemonNotReporting HoldReason = "DaemonNotReporting"
	// HoldDisabled: the pod's restart-disabled annotation or the manager-wide switch
	// (--restarts=disabled) forbids restarts.
	HoldDisabled HoldReason = "Disabled"
	// HoldShadow: the pod was admitted in Shadow mode (label enhancedliveness.io/mode): it kept
	// its native liveness probe, the kubelet restarts it, and the operator never does; the
	// restart would have been made.
	HoldShadow HoldReason = "Shadow"
	// HoldDryRun is the 0.1.0 name of HoldShadow. The decision no longer holds for it; it stays
	// a valid value so that counts 0.1.0 wrote in a policy status remain valid.
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
	// HoldMaxUnavailable: as many pods of the workload are unavailable as its budget allows
	// (maxUnavailable, else its PodDisruptionBudget).
	HoldMaxUnavailable HoldReason = "MaxUnavailable"
	// HoldRateLimited: the manager-wide token bucket or a governing policy's has no token.
	HoldRateLimited HoldReason = "RateLimited"
)

// HoldReasons lists every hold reason the decision gives, in its order (HoldDryRun, which it no
// longer gives, is not among them).
var HoldReasons = []HoldReason{
	HoldDaemonNotReporting, HoldDisabled, HoldShadow, HoldBlacklisted,
	HoldFailureStorm, HoldNodeStorm, HoldRestartIneffective, HoldMaxUnavailable, HoldRateLimited,
}

// HoldKind says how a hold ends.
type HoldKind string

const (
	// HoldKindBudget: the restart waits for budget (unavailable pods, tokens) that comes back as
	// other restarts finish and time passes; it ends by itself.
	HoldKindBudget HoldKind = "Budget"
	// HoldKindDoubt: the evidence says a restart may not help or may hurt (a storm, restarts that
	// did not help, a daemon not reporting). It is bounded by the policy's maxHold: after it, one
	// held pod is restarted as a canary.
	HoldKindDoubt HoldKind = "Doubt"
	// HoldKindChoice: someone chose that the restart is not made (the restart-disabled switches,
	// Shadow, the blacklist). It lasts as long as that choice (a Shadow pod's, for its life).
	HoldKindChoice HoldKind = "Choice"
)

// Kind returns how a hold for r ends; "" for a value that is no hold reason.
func (r HoldReason) Kind() HoldKind {
	switch r {
	case HoldMaxUnavailable, HoldRateLimited:
		return HoldKindBudget
	case HoldFailureStorm, HoldNodeStorm, HoldRestartIneffective, HoldDaemonNotReporting:
		return HoldKindDoubt
	case HoldDisabled, HoldShadow, HoldDryRun, HoldBlacklisted:
		return HoldKindChoice
	}
	return ""
}
