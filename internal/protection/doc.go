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

// Package protection holds the pure rules of the restart decision (docs/policy.md): which policies
// govern a pod and how they combine, blacklists, token buckets, workload resolution, the
// maxUnavailable budget, failure-storm and node-storm detection, and the ordered decision itself.
// Nothing here talks to the API server; time comes from an injected clock.
package protection

// Reason is why a restart was held. The strings are part of the API: they appear in events,
// in the policy status (heldByReason) and as the reason label of restarts_held_total.
type Reason string

const (
	ReasonDisabled           Reason = "Disabled"
	ReasonDryRun             Reason = "DryRun"
	ReasonBlacklisted        Reason = "Blacklisted"
	ReasonFailureStorm       Reason = "FailureStorm"
	ReasonNodeStorm          Reason = "NodeStorm"
	ReasonRestartIneffective Reason = "RestartIneffective"
	ReasonMaxUnavailable     Reason = "MaxUnavailable"
	ReasonRateLimited        Reason = "RateLimited"
	ReasonDaemonNotReporting Reason = "DaemonNotReporting"
)

// AllReasons lists every hold reason in the order of the decision.
var AllReasons = []Reason{
	ReasonDaemonNotReporting, ReasonDisabled, ReasonDryRun, ReasonBlacklisted,
	ReasonFailureStorm, ReasonNodeStorm, ReasonRestartIneffective, ReasonMaxUnavailable, ReasonRateLimited,
}
