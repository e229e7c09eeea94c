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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
)

// plannedPod is pod name/uid of namespace ns with probes given as name, container pairs, each of
// the default interval (10 s).
func plannedPod(name string, uid types.UID, probes ...string) PlannedPod {
	pp := PlannedPod{Name: name, Namespace: "ns", UID: uid}
	for i := 0; i < len(probes); i += 2 {
		pp.Probes = append(pp.Probes, PlannedProbe{Key: results.Key{PodUID: uid, Container: probes[i+1], Probe: probes[i]}, IntervalSeconds: 10})
	}
	return pp
}

func TestBuildStatus_ListsOnlyWhatIsNotPassing(t *testing.T) {
	now := time.Unix(1000, 0)
	spec := []PlannedPod{plannedPod("a", "u1", "p1", "app", "p2", "side", "p9", "x"), plannedPod("b", "u2", "p1", "app")}
	shownFailed := appsv1alpha1.PodProbeStatus{Name: "b", Namespace: "ns", UID: "u2", ProbeStates: []appsv1alpha1.ContainerProbeState{
		{Name: "p1", State: appsv1alpha1.ProbeFailed, ContainerID: "containerd://old"}}}
	since := metav1.NewTime(now.Add(-time.Minute))
	shownSuspect := appsv1alpha1.PodProbeStatus{Name: "b", Namespace: "ns", UID: "u2", ProbeStates: []appsv1alpha1.ContainerProbeState{
		{Name: "p1", State: appsv1alpha1.ProbeSucceeded, ContainerID: "containerd://old", FailingSince: &since}}}
	left := appsv1alpha1.PodProbeStatus{Name: "c", Namespace: "ns", UID: "u3", ProbeStates: []appsv1alpha1.ContainerProbeState{
		{Name: "gone", State: appsv1alpha1.ProbeFailed}}}
	// u1: p1 passes, p2 failed, p9 has no result; u2 has no result in the cache (its worker has not
	// run since the daemon started). What the report shows of u2 decides what it keeps.
	for _, tc := range []struct {
		name             string
		shown            []appsv1alpha1.PodProbeStatus
		probedGeneration int64 // of the report shown; the spec is generation 4
		u2               string
		p9               bool // u1's probe p9 (no result) listed as not probed yet
		probedPods       int32
		failing          int32
	}{
		{"nothing shown: u2 not probed yet", nil, 0, "Unknown", true, 1, 1},
		{"a Failed state shown before a restart is kept", []appsv1alpha1.PodProbeStatus{shownFailed, left}, 4, "Failed", false, 2, 2},
		{"a suspect state shown before a restart is kept", []appsv1alpha1.PodProbeStatus{shownSuspect, left}, 4, "Succeeded", false, 2, 1},
		{"omitted for this spec: still passing", nil, 4, "", false, 2, 1},
		{"omitted for an older spec: maybe new, not probed yet", nil, 3, "Unknown", true, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := results.NewCache()
			c.Set(results.Key{PodUID: "u1", Container: "app", Probe: "p1"}, appsv1alpha1.ProbeSucceeded, "containerd://a", "", now, results.WriteInWindow)
			c.Set(results.Key{PodUID: "u1", Container: "side", Probe: "p2"}, appsv1alpha1.ProbeFailed, "containerd://b", "HTTP probe failed with statuscode: 500", now, results.WriteSoon)
			c.Set(results.Key{PodUID: "u3", Container: "app", Probe: "gone"}, appsv1alpha1.ProbeFailed, "containerd://z", "", now, results.WriteSoon) // pod left the spec
			plan := &Plan{Generation: 4, Pods: spec}
			shown := appsv1alpha1.ProbeResults{ProbedGeneration: tc.probedGeneration, PodProbeStatuses: tc.shown}

			st := BuildStatus(plan, &shown, c)
			if st.ObservedGeneration != 4 || st.ProbedGeneration != 4 {
				t.Errorf("observedGeneration %d, probedGeneration %d: want the plan's 4", st.ObservedGeneration, st.ProbedGeneration)
			}
			if st.ProbedPods != tc.probedPods || st.FailingProbes != tc.failing {
				t.Errorf("probedPods %d, failingProbes %d; want %d, %d", st.ProbedPods, st.FailingProbes, tc.probedPods, tc.failing)
			}
			ps := st.PodProbeStatuses[0]
			if want := map[bool]int{true: 2, false: 1}[tc.p9]; ps.UID != "u1" || ps.Name != "a" || len(ps.ProbeStates) != want {
				t.Fatalf("u1 lists p2 (failed), p9 (not probed) unless omitted for this spec, never p1 (passing): %+v", ps)
			}
			if p2 := ps.ProbeStates[0]; p2.Name != "p2" || p2.State != appsv1alpha1.ProbeFailed || p2.ContainerID != "containerd://b" ||
				p2.Message != "HTTP probe failed with statuscode: 500" || !p2.LastTransitionTime.Time.Equal(now) {
				t.Errorf("p2 %+v", p2)
			}
			if p9 := ps.ProbeStates[len(ps.ProbeStates)-1]; tc.p9 && (p9.Name != "p9" || p9.State != appsv1alpha1.ProbeUnknown || p9.ContainerID != "") {
				t.Errorf("p9 %+v, want Unknown without a container", p9)
			}
			got := ""
			for _, ps := range st.PodProbeStatuses[1:] {
				if ps.UID != "u2" || len(ps.ProbeStates) != 1 {
					t.Fatalf("only u2 may follow u1 (u3 left the spec): %+v", st.PodProbeStatuses)
				}
				got = string(ps.ProbeStates[0].State)
				if got != "Unknown" && ps.ProbeStates[0].ContainerID != "containerd://old" {
					t.Errorf("the state shown is kept as it was: %+v", ps)
				}
			}
			if got != tc.u2 {
				t.Errorf("u2 listed as %q, want %q", got, tc.u2)
			}
		})
	}
}

// A probe the trust gate holds back (after it passed) is listed NotProbed with why, whatever
// result its worker left and though the report omitted it as passing for this very spec: an
// omitted probe reads as passing. It counts for no probed pod.
func TestBuildStatus_ListsHeldProbesNotProbed(t *testing.T) {
	now := time.Unix(1000, 0)
	c := results.NewCache()
	c.Set(results.Key{PodUID: "u1", Container: "app", Probe: "p1"}, appsv1alpha1.ProbeSucceeded, "containerd://a", "", now, results.WriteInWindow)
	plan := &Plan{Generation: 2, Pods: []PlannedPod{plannedPod("a", "u1", "p1", "app")}}
	shown := BuildStatus(plan, &appsv1alpha1.ProbeResults{}, c)
	if len(shown.PodProbeStatuses) != 0 || shown.ProbedPods != 1 {
		t.Fatalf("a passing probe: %+v", shown)
	}
	const why = "unknown-key: the seal names key k1, which the trust ConfigMap does not list"
	plan.Pods[0].Probes[0].NotRun = why
	for _, cached := range []bool{true, false} {
		if !cached {
			c.Delete(results.Key{PodUID: "u1", Container: "app", Probe: "p1"}) // the worker stopped
		}
		st := BuildStatus(plan, &shown, c)
		if len(st.PodProbeStatuses) != 1 || st.ProbedPods != 0 {
			t.Fatalf("cached result %v: %+v, want the probe listed and no probed pod", cached, st)
		}
		if got := st.PodProbeStatuses[0].ProbeStates[0]; got.State != appsv1alpha1.ProbeNotProbed || got.Message != why {
			t.Fatalf("cached result %v: state %+v", cached, got)
		}
	}
}

// A pod whose probes the daemon cannot name (no such pod, a context that does not decode) is
// listed not probed as a pod, with why (capped), and no probe state: left out of a report
// complete for its spec it would read as passing. A new reason is a change worth a write.
func TestBuildStatus_ListsAPodItCannotNameNotProbed(t *testing.T) {
	c := results.NewCache()
	plan := &Plan{Generation: 2, Pods: []PlannedPod{plannedPod("a", "u1"), plannedPod("b", "u2")}}
	shown := BuildStatus(plan, &appsv1alpha1.ProbeResults{}, c)
	if len(shown.PodProbeStatuses) != 0 {
		t.Fatalf("pods with no probe and no reason: %+v", shown.PodProbeStatuses)
	}
	plan.Pods[0].NotProbed = "pod-not-found: " + strings.Repeat("x", 1000)
	st := BuildStatus(plan, &shown, c)
	if sameReport(&shown, &st) {
		t.Fatal("a pod newly not probed must cause a write")
	}
	if len(st.PodProbeStatuses) != 1 || st.ProbedPods != 0 {
		t.Fatalf("%+v: want a listed, no probed pod", st)
	}
	ps := st.PodProbeStatuses[0]
	if ps.UID != "u1" || len(ps.ProbeStates) != 0 || !strings.HasPrefix(ps.NotProbed, "pod-not-found: x") ||
		len(ps.NotProbed) > appsv1alpha1.MaxPodNotProbedLength {
		t.Fatalf("pod %+v", ps)
	}
	plan.Pods[0].NotProbed = "undecodable: bad"
	if again := BuildStatus(plan, &st, c); sameReport(&st, &again) {
		t.Fatal("another reason must cause a write")
	}
}

func TestBuildStatus_WritesOnlyOnChanges(t *testing.T) {
	now := time.Unix(1000, 0)
	c := results.NewCache()
	c.Set(results.Key{PodUID: "u1", Container: "app", Probe: "p1"}, appsv1alpha1.ProbeSucceeded, "containerd://a", "", now, results.WriteInWindow)
	c.Set(results.Key{PodUID: "u2", Container: "app", Probe: "p1"}, appsv1alpha1.ProbeFailed, "containerd://b", "exit code 1", now, results.WriteSoon)
	plan := &Plan{Generation: 2, Pods: []PlannedPod{plannedPod("a", "u1", "p1", "app"), plannedPod("b", "u2", "p1", "app")}}
	st := BuildStatus(plan, &appsv1alpha1.ProbeResults{}, c)
	// A repeated computation with a moved lastProbeTime needs no write, nor does a passing probe
	// that passes on a new container.
	c.Touch(results.Key{PodUID: "u2", Container: "app", Probe: "p1"}, now.Add(time.Second))
	c.Set(results.Key{PodUID: "u1", Container: "app", Probe: "p1"}, appsv1alpha1.ProbeSucceeded, "containerd://a2", "", now.Add(time.Minute), results.WriteInWindow)
	if again := BuildStatus(plan, &st, c); !sameReport(&st, &again) {
		t.Error("a lastProbeTime change or a passing probe alone must not cause a write")
	}
	c.Set(results.Key{PodUID: "u1", Container: "app", Probe: "p1"}, appsv1alpha1.ProbeFailed, "containerd://a2", "x", now, results.WriteSoon)
	if changed := BuildStatus(plan, &st, c); sameReport(&st, &changed) {
		t.Error("a transition must cause a write")
	}
	c.Set(results.Key{PodUID: "u1", Container: "app", Probe: "p1"}, appsv1alpha1.ProbeSucceeded, "containerd://a2", "", now, results.WriteInWindow)
	plan.Generation = 3
	if changed := BuildStatus(plan, &st, c); sameReport(&st, &changed) {
		t.Error("a new spec must be marked as probed")
	}
}

// A result that stays Failed is written again once its lastProbeTime in the report is older than
// FailedRefreshInterval (twice the probe interval, at least 10 s; the interval is the timeout
// when a run may outlast the period); other states are written only when they change.
func TestRefreshDueForFailedResultsOnly(t *testing.T) {
	t0 := time.Unix(1000, 0)
	pod := plannedPod("a", "u1", "p1", "app", "p2", "side", "p3", "slow")
	// The intervals of periods 10 s, 1 s, and 10 s with a timeout of 30 s (prober's
	// Target.IntervalSeconds).
	pod.Probes[0].IntervalSeconds = 10
	pod.Probes[1].IntervalSeconds = 1
	pod.Probes[2].IntervalSeconds = 30
	plan := &Plan{Pods: []PlannedPod{pod}}
	for _, tc := range []struct {
		name      string
		state     appsv1alpha1.ProbeState
		probe     string
		probedAgo time.Duration // since the time the status shows
		due       bool
	}{
		{"failed, period 10s, 19s later", appsv1alpha1.ProbeFailed, "p1", 19 * time.Second, false},
		{"failed, period 10s, 20s later", appsv1alpha1.ProbeFailed, "p1", 20 * time.Second, true},
		{"failed, period 1s: at least 10s", appsv1alpha1.ProbeFailed, "p2", 9 * time.Second, false},
		{"failed, period 1s, 10s later", appsv1alpha1.ProbeFailed, "p2", 10 * time.Second, true},
		{"failed, timeout 30s over period 10s, 59s later", appsv1alpha1.ProbeFailed, "p3", 59 * time.Second, false},
		{"failed, timeout 30s over period 10s, 60s later", appsv1alpha1.ProbeFailed, "p3", 60 * time.Second, true},
		{"succeeded is never refreshed", appsv1alpha1.ProbeSucceeded, "p1", time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			container := map[string]string{"p1": "app", "p2": "side", "p3": "slow"}[tc.probe]
			c := results.NewCache()
			c.Set(results.Key{PodUID: "u1", Container: container, Probe: tc.probe}, tc.state, "containerd://a", "", t0, results.WriteInWindow)
			shown := BuildStatus(plan, &appsv1alpha1.ProbeResults{}, c)
			c.Touch(results.Key{PodUID: "u1", Container: container, Probe: tc.probe}, t0.Add(tc.probedAgo))
			desired := BuildStatus(plan, &shown, c)
			if !sameReport(&shown, &desired) {
				t.Fatal("only lastProbeTime moved: the report is the same")
			}
			if got := refreshDue(plan, &shown, &desired); got != tc.due {
				t.Fatalf("refreshDue = %v, want %v", got, tc.due)
			}
		})
	}
}
