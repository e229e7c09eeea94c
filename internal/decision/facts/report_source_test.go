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

package facts

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// The results come from the node's NodePodProbeReport once a daemon has written it (it sets
// probedGeneration), and from the NodePodProbe's status otherwise: a daemon from before the
// report still runs on the node during an upgrade.
func TestEvidence_ReportOrNodePodProbeStatus(t *testing.T) {
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	results := func(is probeIs, shape string) appsv1alpha1.ProbeResults {
		npp, _ := nodeStatus(now, []probeIs{is}, shape)
		return npp.Status.ProbeResults
	}
	failing := Evidence{Failed: 1, Since: now.Add(-10 * time.Second)}
	for _, tc := range []struct {
		name   string
		status appsv1alpha1.ProbeResults  // the NodePodProbe's
		report *appsv1alpha1.ProbeResults // nil: no report object
		want   Evidence
	}{
		{"no report: the NodePodProbe status (full)", results(failed, "full"), nil, failing},
		{"no report: the NodePodProbe status (sparse)", results(passing, "sparse"), nil, Evidence{Passed: true}},
		{"report not written yet: the NodePodProbe status", results(failed, "full"), &appsv1alpha1.ProbeResults{}, failing},
		{"report written, NodePodProbe status cleared", appsv1alpha1.ProbeResults{}, ptrTo(results(failed, "sparse")), failing},
		{"both: the report (failed over an old passing)", results(passing, "full"), ptrTo(results(failed, "sparse")), failing},
		{"both: the report (passing over an old failed)", results(failed, "full"), ptrTo(results(passing, "sparse")), Evidence{Passed: true}},
		{"report for an older spec: not probed yet, whatever the NodePodProbe says", results(passing, "full"),
			ptrTo(results(passing, "sparse, older spec")), Evidence{}},
		{"nothing anywhere: not probed yet", appsv1alpha1.ProbeResults{}, nil, Evidence{}},
		{"empty report, empty status: not probed yet", appsv1alpha1.ProbeResults{}, &appsv1alpha1.ProbeResults{}, Evidence{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			npp, pod := nodeStatus(now, []probeIs{passing}, "full")
			npp.Status.ProbeResults = tc.status
			var objs []client.Object
			if tc.report != nil {
				objs = append(objs, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: npp.Name}, Status: *tc.report})
			}
			got := evidenceOf(t, now, npp, pod, objs...)
			gotSince, wantSince := got.Since, tc.want.Since
			got.Since, tc.want.Since = time.Time{}, time.Time{}
			if got != tc.want || !gotSince.Equal(wantSince) {
				t.Fatalf("evidence %+v since %s, want %+v since %s", got, gotSince, tc.want, wantSince)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
