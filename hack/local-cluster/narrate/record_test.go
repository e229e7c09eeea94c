package main

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

func pod(name string, restarts int32, ready bool) corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", UID: types.UID("uid-" + name)},
		Status: corev1.PodStatus{
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: st}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: restarts}},
		},
	}
}

func crr(name, pod string, phase appsv1alpha1.ContainerRecreateRequestPhase) appsv1alpha1.ContainerRecreateRequest {
	return appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo"},
		Spec:   appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod},
		Status: appsv1alpha1.ContainerRecreateRequestStatus{Phase: phase}}
}

func heldEvent(uid, pod, reason string, count int32) eventsv1.Event {
	e := eventsv1.Event{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Namespace: "demo"},
		Reason: "RestartHeld", Action: reason, Note: reason + ": why",
		Regarding: corev1.ObjectReference{Kind: "Pod", Name: pod}}
	if count > 1 {
		e.Series = &eventsv1.EventSeries{Count: count}
	}
	return e
}

func policyWith(requested int64, held map[string]int64, conds ...metav1.Condition) policyv1alpha1.EnhancedLivenessPolicy {
	p := policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "demo"}}
	p.Status.RestartsRequested = requested
	for r, n := range held {
		p.Status.HeldByReason = append(p.Status.HeldByReason, policyv1alpha1.HeldCount{Reason: policyv1alpha1.HoldReason(r), Count: n})
	}
	p.Status.Conditions = conds
	return p
}

// probes is one node whose report lists states, for a spec it is not complete for (every pod not
// listed is not reported).
func probes(states map[string]appsv1alpha1.ProbeState) []nodeResults {
	var n nodeResults
	for _, name := range sortedKeys(states) {
		n.results.PodProbeStatuses = append(n.results.PodProbeStatuses, appsv1alpha1.PodProbeStatus{
			Name: name, Namespace: "demo", UID: types.UID("uid-" + name),
			ProbeStates: []appsv1alpha1.ContainerProbeState{{Name: name + "-app", State: states[name]}}})
	}
	return []nodeResults{n}
}

// A step as the recorder sees it through three polls: what existed before the step is history,
// what appears or grows during it is the step's.
func TestRecorderFactsOfAStep(t *testing.T) {
	r := newRecorder(nil, "demo", "shop", "checkout", nil)
	passing := map[string]appsv1alpha1.ProbeState{"a": appsv1alpha1.ProbeSucceeded, "b": appsv1alpha1.ProbeSucceeded}
	before := &snapshot{desire: 2,
		pods:   []corev1.Pod{pod("a", 3, true), pod("b", 0, true)},
		crrs:   []appsv1alpha1.ContainerRecreateRequest{crr("old", "a", appsv1alpha1.RecreateSucceeded)},
		events: []eventsv1.Event{heldEvent("e1", "b", "MaxUnavailable", 1)},
		policy: policyWith(4, map[string]int64{"MaxUnavailable": 1}),
		probes: probes(passing)}
	r.prime(before)
	r.begin([]string{"a", "b"}, before)

	storm := metav1.Condition{Type: policyv1alpha1.ConditionStormDetected, Status: metav1.ConditionTrue}
	failing := map[string]appsv1alpha1.ProbeState{"a": appsv1alpha1.ProbeSucceeded, "b": appsv1alpha1.ProbeFailed}
	// a is being restarted (unfinished request, not ready); b held again (series count 2) and by the breaker
	r.observe(&snapshot{desire: 2,
		pods: []corev1.Pod{pod("a", 3, false), pod("b", 0, true)},
		crrs: []appsv1alpha1.ContainerRecreateRequest{crr("old", "a", appsv1alpha1.RecreateSucceeded),
			crr("new", "a", appsv1alpha1.RecreatePending)},
		events: []eventsv1.Event{heldEvent("e1", "b", "MaxUnavailable", 2), heldEvent("e2", "b", "FailureStorm", 1)},
		policy: policyWith(5, map[string]int64{"MaxUnavailable": 2, "FailureStorm": 1}, storm),
		probes: probes(failing)})
	// a is back with one more restart; the storm is still on
	r.observe(&snapshot{desire: 2,
		pods:   []corev1.Pod{pod("a", 4, true), pod("b", 0, true)},
		crrs:   []appsv1alpha1.ContainerRecreateRequest{crr("new", "a", appsv1alpha1.RecreateSucceeded)},
		events: []eventsv1.Event{heldEvent("e1", "b", "MaxUnavailable", 2), heldEvent("e2", "b", "FailureStorm", 1)},
		policy: policyWith(5, map[string]int64{"MaxUnavailable": 2, "FailureStorm": 1}, storm),
		probes: probes(failing)})
	f := r.end()

	if f.Restarts["a"] != 1 || f.Restarts["b"] != 0 {
		t.Errorf("Restarts = %v, want a 1, b 0 (counted from the step's start, not from 0)", f.Restarts)
	}
	if f.Requests["a"] != 1 || len(f.Requests) != 1 {
		t.Errorf("Requests = %v, want only the new request of a", f.Requests)
	}
	if !f.Holds["b"]["MaxUnavailable"] || !f.Holds["b"]["FailureStorm"] || len(f.Holds["a"]) != 0 {
		t.Errorf("Holds = %v, want b held MaxUnavailable (series grew) and FailureStorm", f.Holds)
	}
	if f.PolicyRequested != 1 || f.PolicyHeld["MaxUnavailable"] != 1 || f.PolicyHeld["FailureStorm"] != 1 {
		t.Errorf("policy deltas = %d %v, want 1 request, 1 MaxUnavailable, 1 FailureStorm", f.PolicyRequested, f.PolicyHeld)
	}
	if f.MaxUnavailable != 1 || f.UnavailableNow != 0 || f.Samples != 3 {
		t.Errorf("unavailable max %d now %d over %d samples, want 1, 0, 3", f.MaxUnavailable, f.UnavailableNow, f.Samples)
	}
	if !f.StormSeen || !f.StormNow || f.IneffectiveSeen {
		t.Errorf("storm seen %v now %v, ineffective %v; want true true false", f.StormSeen, f.StormNow, f.IneffectiveSeen)
	}
	if !slices.Equal(f.NotPassingNow, []string{"b"}) || len(f.Replaced) != 0 {
		t.Errorf("not passing %v, replaced %v; want [b] and none", f.NotPassingNow, f.Replaced)
	}
}

func TestUnavailable(t *testing.T) {
	cases := []struct {
		name string
		s    snapshot
		want int
	}{
		{"all ready", snapshot{desire: 3, pods: []corev1.Pod{pod("a", 0, true), pod("b", 0, true), pod("c", 0, true)}}, 0},
		{"a missing pod counts", snapshot{desire: 3, pods: []corev1.Pod{pod("a", 0, true), pod("b", 0, true)}}, 1},
		{"not ready counts", snapshot{desire: 2, pods: []corev1.Pod{pod("a", 0, false), pod("b", 0, true)}}, 1},
		{"ready but being restarted counts", snapshot{desire: 2, pods: []corev1.Pod{pod("a", 0, true), pod("b", 0, true)},
			crrs: []appsv1alpha1.ContainerRecreateRequest{crr("r", "a", appsv1alpha1.RecreateRecreating)}}, 1},
		{"a new request without a phase counts", snapshot{desire: 2, pods: []corev1.Pod{pod("a", 0, true), pod("b", 0, true)},
			crrs: []appsv1alpha1.ContainerRecreateRequest{crr("r", "a", "")}}, 1},
		{"a finished request does not", snapshot{desire: 2, pods: []corev1.Pod{pod("a", 0, true), pod("b", 0, true)},
			crrs: []appsv1alpha1.ContainerRecreateRequest{crr("r", "a", appsv1alpha1.RecreateFailed)}}, 0},
		{"more pods than desired: never below 0", snapshot{desire: 1, pods: []corev1.Pod{pod("a", 0, true), pod("b", 0, true)}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := unavailable(&c.s); got != c.want {
				t.Errorf("unavailable = %d, want %d", got, c.want)
			}
		})
	}
}

func TestNotPassing(t *testing.T) {
	npps := probes(map[string]appsv1alpha1.ProbeState{"a": appsv1alpha1.ProbeSucceeded, "b": appsv1alpha1.ProbeUnknown,
		"c": "Failing"})
	got := notPassing(npps, "demo", []corev1.Pod{pod("a", 0, true), pod("b", 0, true), pod("c", 0, true), pod("d", 0, true)})
	want := []string{"b", "c", "d (not reported)"}
	if !slices.Equal(got, want) {
		t.Errorf("notPassing = %v, want %v", got, want)
	}
	if got := notPassing(npps, "other", nil); len(got) != 0 {
		t.Errorf("another namespace's probes count: %v", got)
	}
}

// A report complete for its spec (probedGeneration) lists only what is not passing: a pod of the
// spec it leaves out passes; a pod of no spec is still not reported, and so is every pod left
// out while the daemon has not caught up with the spec.
func TestNotPassingCompleteReport(t *testing.T) {
	pods := []corev1.Pod{pod("a", 0, true), pod("b", 0, true), pod("d", 0, true)}
	nodes := probes(map[string]appsv1alpha1.ProbeState{"b": appsv1alpha1.ProbeUnknown})
	nodes[0].spec.Generation = 4
	for _, name := range []string{"a", "b"} {
		nodes[0].spec.Spec.PodProbes = append(nodes[0].spec.Spec.PodProbes,
			appsv1alpha1.PodProbe{Name: name, Namespace: "demo", UID: types.UID("uid-" + name)})
	}
	nodes[0].results.ProbedGeneration = 4
	if got, want := notPassing(nodes, "demo", pods), []string{"b", "d (not reported)"}; !slices.Equal(got, want) {
		t.Errorf("complete report: notPassing = %v, want %v", got, want)
	}
	nodes[0].spec.Generation = 5 // the spec changed since the daemon's last write
	if got, want := notPassing(nodes, "demo", pods), []string{"a (not reported)", "b", "d (not reported)"}; !slices.Equal(got, want) {
		t.Errorf("report of an older spec: notPassing = %v, want %v", got, want)
	}
}

func TestHoldReason(t *testing.T) {
	cases := []struct {
		e    eventsv1.Event
		want string
	}{
		{eventsv1.Event{Action: "FailureStorm", Note: "FailureStorm: 5 of 6 failing"}, "FailureStorm"},
		{eventsv1.Event{Note: "RestartIneffective: restarted containers fail again"}, "RestartIneffective"},
		{eventsv1.Event{Note: "no reason here"}, "unknown"},
	}
	for _, c := range cases {
		if got := holdReason(c.e); got != c.want {
			t.Errorf("holdReason(%q) = %q, want %q", c.e.Note, got, c.want)
		}
	}
}

// The results are read from each node's report: a NodePodProbe without one has none yet.
func TestNotPassingReadsReports(t *testing.T) {
	pods := []corev1.Pod{pod("a", 0, true), pod("b", 0, true)}
	npp := appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: "n1", Generation: 2}}
	for _, name := range []string{"a", "b"} {
		npp.Spec.PodProbes = append(npp.Spec.PodProbes, appsv1alpha1.PodProbe{Name: name, Namespace: "demo", UID: types.UID("uid-" + name)})
	}
	report := appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: probes(map[string]appsv1alpha1.ProbeState{"b": appsv1alpha1.ProbeFailed})[0].results}
	report.Status.ProbedGeneration = 2
	other := appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}
	nodes := []appsv1alpha1.NodePodProbe{npp}
	if got, want := notPassing(pairReports(nodes, []appsv1alpha1.NodePodProbeReport{other, report}), "demo", pods), []string{"b"}; !slices.Equal(got, want) {
		t.Errorf("written report: notPassing = %v, want %v", got, want)
	}
	if got, want := notPassing(pairReports(nodes, nil), "demo", pods), []string{"a (not reported)", "b (not reported)"}; !slices.Equal(got, want) {
		t.Errorf("no report: notPassing = %v, want %v", got, want)
	}
}
