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

package figures

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

var web = policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}

func avoidedRec(ref policyv1alpha1.WorkloadReference, mode string, r policyv1alpha1.HoldReason) Record {
	return Record{Workload: ref, Mode: mode, Figure: Figure{Kind: Avoided, Reason: r}}
}

func agreedRec(mode string, added time.Duration) Record {
	return Record{Workload: web, Mode: mode, Figure: Figure{Kind: Agreed, Added: added}}
}

func TestAddToStatus(t *testing.T) {
	enforce, shadow := string(policyv1alpha1.ModeEnforce), string(policyv1alpha1.ModeShadow)
	storm, budget := policyv1alpha1.HoldFailureStorm, policyv1alpha1.HoldMaxUnavailable
	start := metav1.NewTime(t0)
	window := func(w ...policyv1alpha1.WorkloadFigures) *policyv1alpha1.EnrollingFigures {
		return &policyv1alpha1.EnrollingFigures{WindowStart: start, Workloads: w}
	}
	for _, tc := range []struct {
		name    string
		cur     *policyv1alpha1.EnrollingFigures
		records []Record
		now     time.Time
		want    *policyv1alpha1.EnrollingFigures
	}{
		{"nothing counted: nothing written", nil, nil, t0, nil},
		{"a first figure starts the window", nil, []Record{avoidedRec(web, enforce, storm)}, t0.Add(300 * time.Millisecond),
			window(policyv1alpha1.WorkloadFigures{Workload: web, Mode: enforce, Avoided: 1,
				AvoidedByReason: []policyv1alpha1.HeldCount{{Reason: storm, Count: 1}}})},
		{"by workload and mode, by reason; added times with their median and max",
			window(policyv1alpha1.WorkloadFigures{Workload: web, Mode: enforce, Avoided: 1,
				AvoidedByReason: []policyv1alpha1.HeldCount{{Reason: storm, Count: 1}}}),
			[]Record{avoidedRec(web, enforce, storm), avoidedRec(web, enforce, budget), avoidedRec(web, shadow, storm),
				agreedRec(enforce, 4*time.Second), agreedRec(enforce, 1400*time.Millisecond), agreedRec(enforce, 30*time.Second)},
			t0.Add(time.Hour),
			window(policyv1alpha1.WorkloadFigures{Workload: web, Mode: enforce, Avoided: 3, Agreed: 3,
				AvoidedByReason: []policyv1alpha1.HeldCount{{Reason: storm, Count: 2}, {Reason: budget, Count: 1}},
				AddedSeconds:    []int32{4, 1, 30}, AddedP50Seconds: 4, AddedMaxSeconds: 30},
				policyv1alpha1.WorkloadFigures{Workload: web, Mode: shadow, Avoided: 1,
					AvoidedByReason: []policyv1alpha1.HeldCount{{Reason: storm, Count: 1}}})},
		{"a window past 24 h is dropped", window(policyv1alpha1.WorkloadFigures{Workload: web, Mode: enforce, Avoided: 5}),
			nil, t0.Add(Window), nil},
		{"a window past 24 h starts again with the new figures",
			window(policyv1alpha1.WorkloadFigures{Workload: web, Mode: enforce, Avoided: 5}),
			[]Record{agreedRec(shadow, 0)}, t0.Add(Window + time.Second),
			&policyv1alpha1.EnrollingFigures{WindowStart: metav1.NewTime(t0.Add(Window + time.Second)),
				Workloads: []policyv1alpha1.WorkloadFigures{{Workload: web, Mode: shadow, Agreed: 1,
					AddedSeconds: []int32{0}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AddToStatus(tc.cur, tc.records, tc.now)
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("AddToStatus() =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestAddToStatusBounded(t *testing.T) {
	var records []Record
	for i := range MaxWorkloads + 5 {
		ref := policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: fmt.Sprintf("w%d", i)}
		for range i + 1 {
			records = append(records, avoidedRec(ref, "Enforce", policyv1alpha1.HoldFailureStorm))
		}
	}
	for range 3 * MaxAdded {
		records = append(records, agreedRec("Shadow", time.Second))
	}
	got := AddToStatus(nil, records, t0)
	if len(got.Workloads) != MaxWorkloads {
		t.Fatalf("%d workloads, want %d", len(got.Workloads), MaxWorkloads)
	}
	// Most restarts first: web's 60 agreed, then w24 … ; the five least counted are dropped.
	if w := got.Workloads[0]; w.Workload != web || w.Agreed != 3*MaxAdded || len(w.AddedSeconds) != MaxAdded {
		t.Errorf("first: %s %s agreed %d, %d added times", w.Workload.Name, w.Mode, w.Agreed, len(w.AddedSeconds))
	}
	if last := got.Workloads[MaxWorkloads-1]; last.Workload.Name != "w6" {
		t.Errorf("last kept: %s, want w6", last.Workload.Name)
	}
}
