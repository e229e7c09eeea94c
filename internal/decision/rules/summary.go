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

package rules

import (
	"time"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// The policy status shows, per workload, the verdicts of the rules above: it asks them here and
// judges nothing itself, so each rule is judged in one place.

// WorkloadHolds is what the decision's memory says of one workload: what its decisions held and
// when it was last seen in a storm.
type WorkloadHolds struct {
	// Reason is the first in decision order of the reasons its pods are held for ("" if none);
	// Ineffective: a pod of it is held RestartIneffective.
	Reason      policyv1alpha1.HoldReason
	Ineffective bool
	// LastStorm is when a decision last saw it in a storm (StormSeen: one did).
	LastStorm time.Time
	StormSeen bool
}

// WorkloadVerdict is what the policy status shows of one workload.
type WorkloadVerdict struct {
	// Storm: its failing and suspect pods are over the policy's maxFailing now, or a decision
	// holds its restarts for a storm (one the whole workload's counts may not show: a
	// revision's).
	Storm bool
	// Settling: not in a storm now, but its last one has not settled yet (Settling).
	Settling bool
	// Ineffective: its restarts are held because they did not help.
	Ineffective bool
	// HeldReason is FailureStorm while in a storm or settling, else the first reason in decision
	// order its pods are held for.
	HeldReason policyv1alpha1.HoldReason
}

// JudgeWorkload judges one workload for the status of policy p, from the workload's pods now
// (all of them: the status counts every failing pod, whenever its failures began), what the
// memory holds of it, the storm settle period and the time. It is in a storm when one of its
// containers is.
func JudgeWorkload(w WorkloadState, p *Policy, h WorkloadHolds, settle time.Duration, now time.Time) WorkloadVerdict {
	maxFailing := Scaled(p.MaxFailing, w.Desired)
	storm := h.Reason == policyv1alpha1.HoldFailureStorm || len(w.Containers()) == 0 && w.Storm(maxFailing)
	for _, c := range w.Containers() {
		// Judged per container, as a decision does: a sidecar failing everywhere beside a
		// healthy app is the sidecar's storm, and shows as one.
		storm = storm || w.For(c).Storm(maxFailing)
	}
	left, _ := Settling(false, h.LastStorm, h.StormSeen, settle, now)
	v := WorkloadVerdict{Storm: storm, Settling: !storm && left > 0, Ineffective: h.Ineffective, HeldReason: h.Reason}
	if v.Storm || v.Settling {
		v.HeldReason = policyv1alpha1.HoldFailureStorm
	}
	return v
}
