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

package prober

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	eltestutil "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// failingPods are n pods of namespace ns, each with probes failed probes.
func failingPods(ns string, n, probes int) []appsv1alpha1.PodProbeStatus {
	out := make([]appsv1alpha1.PodProbeStatus, n)
	for i := range out {
		ps := appsv1alpha1.PodProbeStatus{Name: fmt.Sprintf("p%d", i), Namespace: ns, UID: types.UID(fmt.Sprintf("%s-%d", ns, i))}
		for j := range probes {
			ps.ProbeStates = append(ps.ProbeStates, appsv1alpha1.ContainerProbeState{Name: fmt.Sprintf("p%d-c%d", i, j),
				State: appsv1alpha1.ProbeFailed, Message: strings.Repeat("m", 200)})
		}
		out[i] = ps
	}
	return out
}

// Over its budget, the report leaves out the namespace with the most states, then the next,
// until it fits; a namespace that fits beside them keeps its results.
func TestFitBudget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pods    [][]appsv1alpha1.PodProbeStatus
		budget  int
		omitted []string
	}{
		{"within budget: nothing left out", [][]appsv1alpha1.PodProbeStatus{failingPods("a", 2, 2), failingPods("b", 1, 1)}, 1 << 20, nil},
		{"one namespace fills the report", [][]appsv1alpha1.PodProbeStatus{failingPods("noisy", 50, 10), failingPods("quiet", 1, 1)}, 8 << 10, []string{"noisy"}},
		{"two namespaces over, the smallest kept", [][]appsv1alpha1.PodProbeStatus{failingPods("big", 40, 10), failingPods("bigger", 50, 10),
			failingPods("small", 2, 1)}, 8 << 10, []string{"big", "bigger"}},
		{"the most states, not the most pods, goes first", [][]appsv1alpha1.PodProbeStatus{failingPods("many-pods", 12, 1),
			failingPods("many-states", 2, 10)}, 5 << 10, []string{"many-states"}},
		{"nothing fits: everything left out", [][]appsv1alpha1.PodProbeStatus{failingPods("a", 5, 5), failingPods("b", 5, 5)}, 100, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := appsv1alpha1.ProbeResults{ProbedGeneration: 3}
			for _, pods := range tc.pods {
				st.PodProbeStatuses = append(st.PodProbeStatuses, pods...)
			}
			for i := range st.PodProbeStatuses {
				st.FailingProbes += int32(st.PodProbeStatuses[i].FailedProbes())
			}
			size := fitBudget(&st, tc.budget)
			if !slices.Equal(st.OmittedNamespaces, tc.omitted) {
				t.Fatalf("omitted %v, want %v", st.OmittedNamespaces, tc.omitted)
			}
			if size != encodedSize(&st) || (size > tc.budget && len(st.PodProbeStatuses) > 0) {
				t.Fatalf("size %d (encoded %d), budget %d", size, encodedSize(&st), tc.budget)
			}
			failing := int32(0)
			for _, ps := range st.PodProbeStatuses {
				if slices.Contains(tc.omitted, ps.Namespace) {
					t.Fatalf("pod %s/%s of an omitted namespace is listed", ps.Namespace, ps.Name)
				}
				failing += int32(ps.FailedProbes())
			}
			if st.FailingProbes != failing {
				t.Fatalf("failingProbes %d, listed failed states %d", st.FailingProbes, failing)
			}
		})
	}
}

// A pod of a namespace the report shows left out has not passed for being left out: without a
// result it is reported not probed yet, though the report is complete for the spec.
func TestBuildStatus_AnOmittedNamespaceIsNotPassing(t *testing.T) {
	c := NewCache()
	pp := plannedPod("a", "u1", "p1", "app")
	pp.Namespace = "noisy"
	plan := &Plan{Generation: 2, Pods: []PlannedPod{pp}}
	for _, omitted := range []bool{false, true} {
		shown := appsv1alpha1.ProbeResults{ProbedGeneration: 2}
		if omitted {
			shown.OmittedNamespaces = []string{"noisy"}
		}
		st := BuildStatus(plan, &shown, c)
		if listed := len(st.PodProbeStatuses) == 1; listed != omitted {
			t.Fatalf("omitted %t: %+v", omitted, st.PodProbeStatuses)
		}
		if omitted && st.PodProbeStatuses[0].ProbeStates[0].State != appsv1alpha1.ProbeUnknown {
			t.Fatalf("state %+v, want Unknown", st.PodProbeStatuses[0].ProbeStates[0])
		}
	}
}

// The status writer keeps the node's report within its budget: the namespace that fills it is
// left out and named, the other's failure is written, and a Warning event and the metrics say so.
func TestStatusWriter_LeavesOutTheNamespaceThatFillsTheReport(t *testing.T) {
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	cl := fake.NewClientBuilder().WithScheme(eltestutil.Scheme()).WithStatusSubresource(rep).WithObjects(rep).Build()
	rec := events.NewFakeRecorder(10)
	results := NewCache()
	w := &StatusWriter{Client: cl, APIReader: cl, NodeName: "node-a", Results: results, Budget: 16 << 10, Recorder: rec}
	plan := &Plan{Generation: 1}
	now := time.Unix(1000, 0)
	add := func(ns string, pods, probes int) {
		for i := range pods {
			uid := types.UID(fmt.Sprintf("%s-%d", ns, i))
			pp := PlannedPod{Name: fmt.Sprintf("p%d", i), Namespace: ns, UID: uid}
			for j := range probes {
				k := Key{PodUID: uid, Container: fmt.Sprintf("c%d", j), Probe: fmt.Sprintf("p%d-c%d", i, j)}
				pp.Probes = append(pp.Probes, Target{Key: k, PodName: pp.Name, Namespace: ns})
				results.Set(k, appsv1alpha1.ProbeFailed, "containerd://"+string(uid), "exit code 1: "+strings.Repeat("x", 1000), now, WriteSoon)
			}
			plan.Pods = append(plan.Pods, pp)
		}
	}
	add("noisy", 30, 64)
	add("quiet", 1, 1)
	w.SetPlan(plan)
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := &appsv1alpha1.NodePodProbeReport{}
	if err := cl.Get(context.Background(), client.ObjectKey{Name: "node-a"}, got); err != nil {
		t.Fatal(err)
	}
	st := got.Status
	if !slices.Equal(st.OmittedNamespaces, []string{"noisy"}) || len(st.PodProbeStatuses) != 1 ||
		st.PodProbeStatuses[0].Namespace != "quiet" || st.FailingProbes != 1 {
		t.Fatalf("report: omitted %v, %d pods listed, failing %d", st.OmittedNamespaces, len(st.PodProbeStatuses), st.FailingProbes)
	}
	if m := st.PodProbeStatuses[0].ProbeStates[0].Message; len(m) > 256 || !strings.HasPrefix(m, "exit code 1: ") {
		t.Fatalf("message of %d bytes: %.40q", len(m), m)
	}
	if size := encodedSize(&st); size > 16<<10 || testutil.ToFloat64(ReportBytes) != float64(size) {
		t.Fatalf("report of %d bytes, metric %v", size, testutil.ToFloat64(ReportBytes))
	}
	if n := testutil.ToFloat64(OmittedNamespaces); n != 1 {
		t.Fatalf("omitted namespaces metric %v", n)
	}
	select {
	case e := <-rec.Events:
		if !strings.HasPrefix(e, "Warning "+ReasonReportOverBudget+" ") || !strings.Contains(e, "namespaces noisy on this node are left out") {
			t.Fatalf("event %q", e)
		}
	default:
		t.Fatal("no event")
	}
	// Nothing changed: no write, no second event.
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != 0 {
		t.Fatalf("a second event: %q", <-rec.Events)
	}
}
