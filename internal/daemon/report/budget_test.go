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

package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	eltestutil "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// failingPods are n pods of namespace ns, each with probes failed probes.
func failingPods(ns string, n, probes int) []appsv1alpha1.PodProbeStatus {
	return podsWith(ns, n, slices.Repeat([]appsv1alpha1.ProbeState{appsv1alpha1.ProbeFailed}, probes)...)
}

// podsWith are n pods of namespace ns, each with a state per entry of states: Failed, Unknown
// (not probed yet), NotProbed, or Succeeded for a suspect (failing below its threshold).
func podsWith(ns string, n int, states ...appsv1alpha1.ProbeState) []appsv1alpha1.PodProbeStatus {
	at := metav1.NewTime(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	out := make([]appsv1alpha1.PodProbeStatus, n)
	for i := range out {
		ps := appsv1alpha1.PodProbeStatus{Name: fmt.Sprintf("p%d", i), Namespace: ns, UID: types.UID(fmt.Sprintf("%s-%d", ns, i))}
		for j, state := range states {
			s := appsv1alpha1.ContainerProbeState{Name: fmt.Sprintf("p%d-c%d", i, j), State: state, Message: strings.Repeat("m", 200)}
			if state == appsv1alpha1.ProbeFailed || state == appsv1alpha1.ProbeSucceeded {
				s.FailingSince = &at
			}
			ps.ProbeStates = append(ps.ProbeStates, s)
		}
		out[i] = ps
	}
	return out
}

// Over its budget, the report gives each namespace a fair share: a namespace within it keeps
// every result; a namespace over it is listed in omittedNamespaces and keeps only its Failed
// states, in order, as many as its share holds, so its hangs are still restarted.
func TestFitBudget(t *testing.T) {
	const (
		F = appsv1alpha1.ProbeFailed
		U = appsv1alpha1.ProbeUnknown
		N = appsv1alpha1.ProbeNotProbed
		S = appsv1alpha1.ProbeSucceeded // with failingSince: suspect
	)
	for _, tc := range []struct {
		name    string
		pods    [][]appsv1alpha1.PodProbeStatus
		budget  int
		omitted []string
		// keeps: which omitted namespaces keep Failed states: "each", "some" or "none".
		keeps string
	}{
		{"within budget: nothing cut", [][]appsv1alpha1.PodProbeStatus{failingPods("a", 2, 2), failingPods("b", 1, 1)}, 1 << 20, nil, "none"},
		{"one namespace fills the report: cut to the Failed states its share holds, the other whole",
			[][]appsv1alpha1.PodProbeStatus{failingPods("noisy", 50, 10), failingPods("quiet", 1, 1)}, 8 << 10, []string{"noisy"}, "each"},
		{"two namespaces over, the smallest whole", [][]appsv1alpha1.PodProbeStatus{failingPods("big", 40, 10), failingPods("bigger", 50, 10),
			failingPods("small", 2, 1)}, 8 << 10, []string{"big", "bigger"}, "each"},
		{"a flood of Failed states cannot take another namespace's suspects and unknowns",
			[][]appsv1alpha1.PodProbeStatus{failingPods("flood", 200, 10), podsWith("quiet", 3, S, U, N)}, 16 << 10, []string{"flood"}, "each"},
		{"a namespace over its share loses its suspects, unknowns and not-probed states first, not its Failed",
			[][]appsv1alpha1.PodProbeStatus{podsWith("mixed", 30, U, F, S, N), failingPods("quiet", 1, 1)}, 12 << 10, []string{"mixed"}, "each"},
		{"a namespace with nothing Failed over its share keeps nothing",
			[][]appsv1alpha1.PodProbeStatus{podsWith("starting", 60, U, U), failingPods("quiet", 1, 1)}, 6 << 10, []string{"starting"}, "none"},
		{"a share smaller than a state: what the shares leave still holds some Failed states",
			[][]appsv1alpha1.PodProbeStatus{failingPods("a", 3, 5), failingPods("b", 3, 5), failingPods("c", 3, 5), failingPods("d", 3, 5)}, 1 << 10,
			[]string{"a", "b", "c", "d"}, "some"},
		{"nothing fits: every namespace listed, nothing kept", [][]appsv1alpha1.PodProbeStatus{failingPods("a", 5, 5), failingPods("b", 5, 5)}, 100,
			[]string{"a", "b"}, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := appsv1alpha1.ProbeResults{ProbedGeneration: 3}
			for _, pods := range tc.pods {
				st.PodProbeStatuses = append(st.PodProbeStatuses, pods...)
			}
			for i := range st.PodProbeStatuses {
				st.FailingProbes += int32(st.PodProbeStatuses[i].FailedProbes())
			}
			whole := slices.Clone(st.PodProbeStatuses)
			size := fitBudget(&st, tc.budget)
			if !slices.Equal(st.OmittedNamespaces, tc.omitted) {
				t.Fatalf("omitted %v, want %v", st.OmittedNamespaces, tc.omitted)
			}
			if size != encodedSize(&st) || (size > tc.budget && len(st.PodProbeStatuses) > 0) {
				t.Fatalf("size %d (encoded %d), budget %d", size, encodedSize(&st), tc.budget)
			}
			checkCut(t, whole, &st, tc.keeps)
		})
	}
}

// checkCut checks the entries fitBudget kept of whole: a namespace it did not list whole and
// unchanged; an omitted one only its Failed states, the first ones in order; failingProbes
// their count.
func checkCut(t *testing.T, whole []appsv1alpha1.PodProbeStatus, st *appsv1alpha1.ProbeResults, keeps string) {
	t.Helper()
	kept := map[string][]string{}
	failing := int32(0)
	for _, ps := range st.PodProbeStatuses {
		failing += int32(ps.FailedProbes())
		for _, s := range ps.ProbeStates {
			kept[ps.Namespace] = append(kept[ps.Namespace], s.Name)
		}
	}
	if st.FailingProbes != failing {
		t.Fatalf("failingProbes %d, listed failed states %d", st.FailingProbes, failing)
	}
	want := map[string][]string{}
	for _, ps := range whole {
		if !slices.Contains(st.OmittedNamespaces, ps.Namespace) {
			if i := slices.IndexFunc(st.PodProbeStatuses, func(k appsv1alpha1.PodProbeStatus) bool { return k.UID == ps.UID }); i < 0 ||
				encodedSize(&st.PodProbeStatuses[i]) != encodedSize(&ps) {
				t.Fatalf("pod %s/%s of a namespace within its share is not listed whole", ps.Namespace, ps.Name)
			}
			continue
		}
		for _, s := range ps.ProbeStates {
			if s.Failed() {
				want[ps.Namespace] = append(want[ps.Namespace], s.Name)
			}
		}
	}
	some := false
	for _, ns := range st.OmittedNamespaces {
		got := kept[ns]
		if len(got) > len(want[ns]) || !slices.Equal(got, want[ns][:len(got)]) {
			t.Fatalf("namespace %s keeps %v: want the first of its Failed states %v", ns, got, want[ns])
		}
		if keeps == "each" && len(got) == 0 {
			t.Fatalf("namespace %s keeps none of its %d Failed states", ns, len(want[ns]))
		}
		some = some || len(got) > 0
	}
	if some != (keeps != "none") {
		t.Fatalf("omitted namespaces keep %v; want %s of them to keep Failed states", kept, keeps)
	}
}

// The share is fair: namespaces with the same results over it keep as many Failed states (one
// more for some, from what the shares leave), and the report is filled to within one state of
// its budget.
func TestFitBudget_SharesFairly(t *testing.T) {
	st := appsv1alpha1.ProbeResults{ProbedGeneration: 3}
	for _, ns := range []string{"aaa", "bbb", "ccc"} {
		st.PodProbeStatuses = append(st.PodProbeStatuses, failingPods(ns, 40, 5)...)
	}
	st.PodProbeStatuses = append(st.PodProbeStatuses, failingPods("ddd", 1, 1)...)
	one := encodedSize(&st.PodProbeStatuses[0].ProbeStates[0])
	const budget = 32 << 10
	size := fitBudget(&st, budget)
	perNS := map[string]int{}
	for _, ps := range st.PodProbeStatuses {
		perNS[ps.Namespace] += len(ps.ProbeStates)
	}
	if !slices.Equal(st.OmittedNamespaces, []string{"aaa", "bbb", "ccc"}) || perNS["ddd"] != 1 {
		t.Fatalf("omitted %v, kept %v", st.OmittedNamespaces, perNS)
	}
	if least, most := min(perNS["aaa"], perNS["bbb"], perNS["ccc"]), max(perNS["aaa"], perNS["bbb"], perNS["ccc"]); least == 0 || most > least+1 {
		t.Fatalf("kept %v: want as many Failed states for each namespace over its share, give or take one", perNS)
	}
	if size > budget || size < budget-(one+len(`{"name":"p00","namespace":"aaa","uid":"aaa-00","probeStates":[]},`)) {
		t.Fatalf("report of %d bytes for a budget of %d: want it filled to within a state", size, budget)
	}
}

// A pod of a namespace the report shows left out has not passed for being left out: without a
// result it is reported not probed yet, though the report is complete for the spec.
func TestBuildStatus_AnOmittedNamespaceIsNotPassing(t *testing.T) {
	c := results.NewCache()
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
// cut to the Failed states its share holds and named, the other's failure is written whole, and
// Warning events (on the report, and on the first pod of the cut namespace, where its users look)
// and the metrics say so.
func TestWriter_CutsTheNamespaceThatFillsTheReport(t *testing.T) {
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	cl := fake.NewClientBuilder().WithScheme(eltestutil.Scheme()).WithStatusSubresource(rep).WithObjects(rep).Build()
	rec := &refRecorder{}
	cache := results.NewCache()
	w := &Writer{Client: cl, APIReader: cl, NodeName: "node-a", Results: cache, Budget: 16 << 10, Recorder: rec}
	plan := &Plan{Generation: 1}
	now := time.Unix(1000, 0)
	add := func(ns string, pods, probes int) {
		for i := range pods {
			uid := types.UID(fmt.Sprintf("%s-%d", ns, i))
			pp := PlannedPod{Name: fmt.Sprintf("p%d", i), Namespace: ns, UID: uid}
			for j := range probes {
				k := results.Key{PodUID: uid, Container: fmt.Sprintf("c%d", j), Probe: fmt.Sprintf("p%d-c%d", i, j)}
				pp.Probes = append(pp.Probes, PlannedProbe{Key: k, IntervalSeconds: 10})
				cache.Set(k, appsv1alpha1.ProbeFailed, "containerd://"+string(uid), "exit code 1: "+strings.Repeat("x", 1000), now, results.WriteSoon)
			}
			plan.Pods = append(plan.Pods, pp)
		}
	}
	add("quiet", 1, 1)
	add("noisy", 30, 64)
	w.SetPlan(plan)
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := &appsv1alpha1.NodePodProbeReport{}
	if err := cl.Get(context.Background(), client.ObjectKey{Name: "node-a"}, got); err != nil {
		t.Fatal(err)
	}
	st := got.Status
	if !slices.Equal(st.OmittedNamespaces, []string{"noisy"}) || len(st.PodProbeStatuses) != 2 ||
		st.PodProbeStatuses[0].Namespace != "quiet" || st.PodProbeStatuses[1].Name != "p0" {
		t.Fatalf("report: omitted %v, pods listed %+v", st.OmittedNamespaces, st.PodProbeStatuses)
	}
	noisy := st.PodProbeStatuses[1].ProbeStates
	if len(noisy) == 0 || noisy[0].Name != "p0-c0" || noisy[0].State != appsv1alpha1.ProbeFailed || st.FailingProbes != int32(1+len(noisy)) {
		t.Fatalf("the noisy namespace keeps %d states (%+v), failing %d: want its first Failed states", len(noisy), noisy, st.FailingProbes)
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
	// The report is cluster-scoped: its event goes to namespace default, where the namespace's
	// users do not look; the first pod of the namespace gets one too, and no other pod.
	if len(rec.events) != 2 {
		t.Fatalf("events %+v, want one on the report and one on a pod of the noisy namespace", rec.events)
	}
	if e := rec.events[0]; e.ref.Kind != "NodePodProbeReport" || e.ref.Name != "node-a" || e.ref.Namespace != "" ||
		!strings.HasPrefix(e.text, "Warning "+ReasonReportOverBudget+" ") || !strings.Contains(e.text, "namespaces noisy on this node are cut to their Failed probes") {
		t.Fatalf("event on the report %+v", e)
	}
	if e := rec.events[1]; e.ref.Kind != "Pod" || e.ref.Namespace != "noisy" || e.ref.Name != "p0" || e.ref.UID != "noisy-0" ||
		!strings.HasPrefix(e.text, "Warning "+ReasonReportOverBudget+" ") ||
		!strings.Contains(e.text, "the NodePodProbeReport of node node-a would take more than its 16384 bytes, and namespace noisy has more than its share") {
		t.Fatalf("event on the pod %+v", e)
	}
	// Nothing changed: no write, no second event.
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rec.events) != 2 {
		t.Fatalf("more events: %+v", rec.events[2:])
	}
}

// refRecorder keeps the events sent with the object each regards.
type refRecorder struct{ events []sentEvent }

type sentEvent struct {
	ref  *corev1.ObjectReference
	text string
}

func (r *refRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _ string, note string, args ...any) {
	r.events = append(r.events, sentEvent{ref: regarding.(*corev1.ObjectReference), text: eventtype + " " + reason + " " + fmt.Sprintf(note, args...)})
}

var _ events.EventRecorder = &refRecorder{}
