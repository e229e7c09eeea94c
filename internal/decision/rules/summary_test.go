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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// The policy status shows the rules' verdicts on a workload: a storm the counts show, one a
// decision held restarts for, its settling, and the reason its pods are held for.
func TestJudgeWorkload(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	half := &Policy{MaxFailing: intstr.FromString("50%")}
	ten := func(failing int) WorkloadState { return WorkloadState{Desired: 10, Pods: pods(10, 10, failing, 0)} }
	const settle = 30 * time.Second
	for _, c := range []struct {
		name string
		w    WorkloadState
		h    WorkloadHolds
		want WorkloadVerdict
	}{
		{"quiet", ten(0), WorkloadHolds{}, WorkloadVerdict{}},
		{"5 of 10 failing, held for the budget", ten(5), WorkloadHolds{Reason: policyv1alpha1.HoldMaxUnavailable},
			WorkloadVerdict{HeldReason: policyv1alpha1.HoldMaxUnavailable}},
		{"6 of 10 failing: a storm before any decision held one", ten(6), WorkloadHolds{},
			WorkloadVerdict{Storm: true, HeldReason: policyv1alpha1.HoldFailureStorm}},
		{"the storm shows whatever else its pods are held for", ten(6), WorkloadHolds{Reason: policyv1alpha1.HoldShadow},
			WorkloadVerdict{Storm: true, HeldReason: policyv1alpha1.HoldFailureStorm}},
		{"a revision's storm a decision held: the whole workload's counts do not show it", ten(2),
			WorkloadHolds{Reason: policyv1alpha1.HoldFailureStorm, StormSeen: true, LastStorm: now},
			WorkloadVerdict{Storm: true, HeldReason: policyv1alpha1.HoldFailureStorm}},
		{"within maxFailing again, last seen 10s ago: settling", ten(2),
			WorkloadHolds{StormSeen: true, LastStorm: now.Add(-10 * time.Second)},
			WorkloadVerdict{Settling: true, HeldReason: policyv1alpha1.HoldFailureStorm}},
		{"settled", ten(2), WorkloadHolds{Reason: policyv1alpha1.HoldMaxUnavailable, StormSeen: true, LastStorm: now.Add(-settle)},
			WorkloadVerdict{HeldReason: policyv1alpha1.HoldMaxUnavailable}},
		{"restarts held as ineffective", ten(1), WorkloadHolds{Reason: policyv1alpha1.HoldRestartIneffective, Ineffective: true},
			WorkloadVerdict{Ineffective: true, HeldReason: policyv1alpha1.HoldRestartIneffective}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := JudgeWorkload(c.w, half, c.h, settle, now); got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
