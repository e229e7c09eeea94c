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

package policystatus

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
)

// The status adds only what was counted since its last write: a failed write leaves the written
// counts as they were, so the next write adds the same decisions (and the new ones) once. A
// DryRun count 0.1.0 wrote stays as it is, beside the Shadow count.
func TestAddCountsSinceTheLastWrite(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := &policyv1alpha1.EnhancedLivenessPolicyStatus{RestartsRequested: 5, RestartsHeld: 5,
		HeldByReason: []policyv1alpha1.HeldCount{{Reason: "FailureStorm", Count: 2}, {Reason: "DryRun", Count: 3}}}
	written := memory.Counts{Requested: 1, Held: map[policyv1alpha1.HoldReason]int64{policyv1alpha1.HoldFailureStorm: 1}}
	now := memory.Counts{Requested: 3, LastRestart: t0,
		Held: map[policyv1alpha1.HoldReason]int64{policyv1alpha1.HoldFailureStorm: 2, policyv1alpha1.HoldShadow: 4}}
	addCounts(st, now.Sub(written))
	if st.RestartsRequested != 7 || st.RestartsHeld != 10 || !st.LastRestartTime.Time.Equal(t0) {
		t.Fatalf("status = %+v", st)
	}
	want := []policyv1alpha1.HeldCount{{Reason: "FailureStorm", Count: 3}, {Reason: "DryRun", Count: 3}, {Reason: "Shadow", Count: 4}}
	if !slices.Equal(st.HeldByReason, want) {
		t.Fatalf("heldByReason = %v, want %v", st.HeldByReason, want)
	}
	before := *st.DeepCopy()
	addCounts(st, now.Sub(now))
	if !equality.Semantic.DeepEqual(before, *st) {
		t.Fatal("nothing new counted must change nothing")
	}
}
