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

package explain

import policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"

// EndsWhen says what ends a hold of each reason, in the words of docs/reference.md's hold
// reasons table (its "ends when" column; a docs test keeps the two the same).
var EndsWhen = map[policyv1alpha1.HoldReason]string{
	policyv1alpha1.HoldDaemonNotReporting: "the daemon renews its Lease and probes the container again, or the pod goes (no canary: no restart can run on the node)",
	policyv1alpha1.HoldDisabled:           "the annotation is removed or set to another value, or the manager runs with `--restarts=enabled`",
	policyv1alpha1.HoldShadow:             "never for this pod, which keeps its mode for life; its replacements, created after every selecting policy says `Enforce`, are admitted in Enforce mode",
	policyv1alpha1.HoldBlacklisted:        "the blacklist entry is removed",
	policyv1alpha1.HoldFailureStorm:       "the count stays within `maxFailing` for `--storm-settle-period`, or a canary passes (30 s after the onset, then after waits doubling up to `maxHold`)",
	policyv1alpha1.HoldNodeStorm:          "the node's count stays within the limit for `--storm-settle-period`, or a canary passes (30 s after the onset, then after waits doubling up to `maxHold`)",
	policyv1alpha1.HoldRestartIneffective: "the ineffective restarts age out of `restartEffectiveness.window`, or a canary passes (30 s after the onset, then after waits doubling up to `maxHold`)",
	policyv1alpha1.HoldMaxUnavailable:     "a pod of the workload is available again; unavailability the operator is not causing (pods not ready by themselves, Pending or held by choice, missing replicas) stops counting `maxHold` after the hold's onset",
	policyv1alpha1.HoldRateLimited:        "the next token is due (decided again at that moment), or the container's canary has passed and not failed again for the time that judges a restart: its released restarts no longer wait for tokens",
}
