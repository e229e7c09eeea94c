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

package nodecondition

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

func TestJudge(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	storm, ineffective := policyv1alpha1.HoldNodeStorm, policyv1alpha1.HoldRestartIneffective
	h := func(r policyv1alpha1.HoldReason, ns, pod, workload string, passing, failing int, since time.Duration) Held {
		return Held{Namespace: ns, Pod: pod, Reason: r, Workload: workload, PassingElsewhere: passing,
			FailingElsewhere: failing, Since: t0.Add(since)}
	}
	cases := []struct {
		name   string
		held   []Held
		reason string
		msg    string
	}{
		{"nothing held", nil, ReasonNone, "no restarts held on node n1 NodeStorm in 2 or more namespaces, nor RestartIneffective in 3 or more"},
		{"one namespace can never set it, however many pods", []Held{
			h(storm, "a", "p1", "Deployment/x", 3, 0, 0), h(storm, "a", "p2", "Deployment/y", 3, 0, 0),
			h(ineffective, "a", "p3", "Deployment/z", 3, 0, 0), h(ineffective, "a", "p4", "Deployment/w", 3, 0, 0),
		}, ReasonNone, "no restarts held"},
		{"a node storm of two namespaces whose workloads pass elsewhere", []Held{
			h(storm, "b", "p2", "Deployment/y", 2, 0, time.Second), h(storm, "a", "p1", "Deployment/x", 1, 0, 2*time.Second),
			h(storm, "b", "p3", "Deployment/y", 2, 0, 0),
		}, ReasonHeld, "restarts of 3 pods of 2 workloads in 2 namespaces (a: 1, b: 2) are held NodeStorm on node n1 since 2026-12-04T12:00:00Z"},
		{"a node storm: a namespace whose workload fails everywhere does not count", []Held{
			h(storm, "a", "p1", "Deployment/x", 1, 0, 0), h(storm, "b", "p2", "Deployment/y", 0, 1, 0),
		}, ReasonNone, "no restarts held"},
		{"a node storm: nothing passes elsewhere, the apps may be at fault, not the node", []Held{
			h(storm, "a", "p1", "Deployment/x", 0, 0, 0), h(storm, "b", "p2", "Deployment/y", 0, 0, 0),
		}, ReasonNone, "no restarts held"},
		{"restarts that do not help in two namespaces (one user's two): not enough", []Held{
			h(ineffective, "a", "p1", "Deployment/x", 1, 0, 0), h(ineffective, "a", "p2", "Deployment/y", 1, 0, 0),
			h(ineffective, "b", "p3", "Deployment/x", 1, 0, 0), h(ineffective, "b", "p4", "Deployment/y", 1, 0, 0),
		}, ReasonNone, "no restarts held"},
		{"restarts that do not help in three namespaces whose workloads pass elsewhere", []Held{
			h(ineffective, "c", "c1", "Deployment/web", 1, 0, time.Minute), h(ineffective, "a", "a1", "Deployment/web", 2, 1, 2*time.Minute),
			h(ineffective, "b", "b1", "StatefulSet/db", 1, 0, 3*time.Minute), h(ineffective, "a", "a2", "Deployment/web", 2, 1, 4*time.Minute),
		}, ReasonIneffective, "restarts did not help on node n1 for 4 pods of 3 workloads in 3 namespaces (a/Deployment/web, b/StatefulSet/db, c/Deployment/web), held RestartIneffective since 2026-12-04T12:01:00Z, while those workloads pass on other nodes"},
		{"the same workloads fail on other nodes as much as they pass: never", []Held{
			h(ineffective, "a", "a1", "Deployment/web", 1, 1, 0), h(ineffective, "b", "b1", "Deployment/web", 2, 0, 0),
			h(ineffective, "c", "c1", "Deployment/web", 1, 3, 0),
		}, ReasonNone, "no restarts held"},
		{"the same workloads fail on the other node too (nothing passes there): never", []Held{
			h(ineffective, "a", "a1", "Deployment/web", 0, 1, 0), h(ineffective, "b", "b1", "Deployment/web", 0, 1, 0),
			h(ineffective, "c", "c1", "Deployment/web", 0, 1, 0),
		}, ReasonNone, "no restarts held"},
		{"one namespace held NodeStorm does not make two with RestartIneffective: the rules do not mix", []Held{
			h(storm, "a", "a1", "Deployment/web", 1, 0, 0), h(ineffective, "b", "b1", "Deployment/web", 1, 0, 0),
			h(ineffective, "c", "c1", "Deployment/web", 1, 0, 0),
		}, ReasonNone, "no restarts held"},
		{"a node storm first when both hold", []Held{
			h(storm, "a", "a1", "Deployment/web", 1, 0, 0), h(storm, "b", "b1", "Deployment/web", 1, 0, 0),
			h(ineffective, "c", "c1", "Deployment/web", 1, 0, 0), h(ineffective, "d", "d1", "Deployment/web", 1, 0, 0),
			h(ineffective, "e", "e1", "Deployment/web", 1, 0, 0),
		}, ReasonHeld, "in 2 namespaces (a: 1, b: 1) are held NodeStorm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Judge("n1", c.held)
			want := map[string]corev1.ConditionStatus{ReasonHeld: corev1.ConditionTrue, ReasonIneffective: corev1.ConditionTrue,
				ReasonNone: corev1.ConditionFalse}[c.reason]
			if v.Status != want || v.Reason != c.reason || !strings.Contains(v.Message, c.msg) {
				t.Fatalf("Judge = %+v, want status %s, reason %s and a message with %q", v, want, c.reason, c.msg)
			}
		})
	}
}

func TestJudgeNamesAtMostTenWorkloads(t *testing.T) {
	var held []Held
	for i := range 12 {
		held = append(held, Held{Namespace: fmt.Sprintf("ns%02d", i), Pod: "p", Reason: policyv1alpha1.HoldRestartIneffective,
			Workload: "Deployment/web", PassingElsewhere: 1})
	}
	v := Judge("n1", held)
	want := "in 12 namespaces (ns00/Deployment/web, ns01/Deployment/web, ns02/Deployment/web, ns03/Deployment/web, " +
		"ns04/Deployment/web, ns05/Deployment/web, ns06/Deployment/web, ns07/Deployment/web, ns08/Deployment/web, " +
		"ns09/Deployment/web and 2 more), held"
	if v.Reason != ReasonIneffective || !strings.Contains(v.Message, want) {
		t.Fatalf("Judge = %+v, want a message with %q", v, want)
	}
}

func TestLimit(t *testing.T) {
	for daemons, want := range map[int]int{0: 1, 1: 1, 2: 1, 19: 1, 20: 2, 29: 2, 30: 3, 1000: 100} {
		if got := Limit(daemons); got != want {
			t.Errorf("Limit(%d) = %d, want %d", daemons, got, want)
		}
	}
}

func TestCap(t *testing.T) {
	sick := Verdict{Status: corev1.ConditionTrue, Reason: ReasonIneffective, Message: "restarts did not help"}
	held := Verdict{Status: corev1.ConditionTrue, Reason: ReasonHeld, Message: "held NodeStorm"}
	well := Verdict{Status: corev1.ConditionFalse, Reason: ReasonNone, Message: "none"}
	cases := []struct {
		name     string
		verdicts map[string]Verdict
		daemons  int
		withheld []string
	}{
		{"one sick node of two: kept", map[string]Verdict{"a": sick, "b": well}, 2, nil},
		{"two sick nodes of two: neither", map[string]Verdict{"a": sick, "b": held}, 2, []string{"a", "b"}},
		{"two of twenty: kept", map[string]Verdict{"a": sick, "b": held, "c": well}, 20, nil},
		{"three of twenty: none, whatever the reason", map[string]Verdict{"c": sick, "a": held, "b": sick, "d": well}, 20, []string{"a", "b", "c"}},
		{"no daemon counted: still one", map[string]Verdict{"a": sick}, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := maps.Clone(c.verdicts)
			got := Cap(c.verdicts, c.daemons)
			if !slices.Equal(got, c.withheld) {
				t.Fatalf("Cap withheld %v, want %v", got, c.withheld)
			}
			for node, v := range c.verdicts {
				if !slices.Contains(c.withheld, node) {
					if v != before[node] {
						t.Errorf("node %s: %+v changed to %+v", node, before[node], v)
					}
					continue
				}
				if v.Status != corev1.ConditionFalse || v.Reason != ReasonWithheld ||
					!strings.HasPrefix(v.Message, fmt.Sprintf("withheld: %d nodes have the evidence at once, more than %d (10%% of the %d nodes with a reporting daemon, at least 1)",
						len(c.withheld), Limit(c.daemons), c.daemons)) || !strings.HasSuffix(v.Message, "; on this node: "+before[node].Message) {
					t.Errorf("node %s: %+v, want False %s with the counts and its own evidence", node, v, ReasonWithheld)
				}
			}
		})
	}
}

func TestConfirm(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	sick := Verdict{Status: corev1.ConditionTrue, Reason: ReasonIneffective, Message: "restarts did not help"}
	well := Verdict{Status: corev1.ConditionFalse, Reason: ReasonNone, Message: "none"}
	withheld := Verdict{Status: corev1.ConditionFalse, Reason: ReasonWithheld, Message: "withheld"}
	cases := []struct {
		name     string
		verdicts map[string]Verdict
		pending  map[string]time.Time
		isTrue   []string
		now      time.Duration // after t0
		written  []string      // the nodes whose verdicts are left to write
		after    map[string]time.Time
	}{
		{"first True verdict: kept back, remembered", map[string]Verdict{"a": sick, "b": well}, map[string]time.Time{},
			nil, 0, []string{"b"}, map[string]time.Time{"a": t0}},
		{"True for less than confirm: still back", map[string]Verdict{"a": sick}, map[string]time.Time{"a": t0},
			nil, ConfirmFor - time.Second, nil, map[string]time.Time{"a": t0}},
		{"True for confirm: written", map[string]Verdict{"a": sick}, map[string]time.Time{"a": t0},
			nil, ConfirmFor, []string{"a"}, map[string]time.Time{"a": t0}},
		{"the condition is True already: never delayed", map[string]Verdict{"a": sick}, map[string]time.Time{},
			[]string{"a"}, 0, []string{"a"}, map[string]time.Time{}},
		{"withheld by the cap before confirmed: forgotten, the next True starts again", map[string]Verdict{"a": withheld, "b": withheld},
			map[string]time.Time{"a": t0}, nil, ConfirmFor, []string{"a", "b"}, map[string]time.Time{}},
		{"a node no longer judged: forgotten", map[string]Verdict{"b": well}, map[string]time.Time{"a": t0},
			nil, time.Second, []string{"b"}, map[string]time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			Confirm(c.verdicts, c.pending, func(n string) bool { return slices.Contains(c.isTrue, n) }, t0.Add(c.now), ConfirmFor)
			if got := slices.Sorted(maps.Keys(c.verdicts)); !slices.Equal(got, c.written) {
				t.Errorf("verdicts left to write: %v, want %v", got, c.written)
			}
			if !maps.Equal(c.pending, c.after) {
				t.Errorf("pending: %v, want %v", c.pending, c.after)
			}
		})
	}
}

func TestNext(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	on := Verdict{Status: corev1.ConditionTrue, Reason: ReasonHeld, Message: "m1"}
	on2 := Verdict{Status: corev1.ConditionTrue, Reason: ReasonHeld, Message: "m2"}
	off := Verdict{Status: corev1.ConditionFalse, Reason: ReasonNone, Message: "none"}
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	cond := func(v Verdict, transition time.Duration) corev1.NodeCondition {
		return corev1.NodeCondition{Type: Type, Status: v.Status, Reason: v.Reason, Message: v.Message,
			LastHeartbeatTime: at(transition), LastTransitionTime: at(transition)}
	}
	cases := []struct {
		name      string
		conds     []corev1.NodeCondition
		v         Verdict
		write     bool
		heartbeat metav1.Time
		since     metav1.Time
	}{
		{"False on a node that never had it: nothing", []corev1.NodeCondition{ready}, off, false, metav1.Time{}, metav1.Time{}},
		{"True on a node without it: added", []corev1.NodeCondition{ready}, on, true, at(time.Hour), at(time.Hour)},
		{"the same verdict again: nothing", []corev1.NodeCondition{ready, cond(on, 59*time.Minute+time.Second)}, on, false, metav1.Time{}, metav1.Time{}},
		{"the same True verdict, its heartbeat a minute old: the heartbeat moves", []corev1.NodeCondition{ready, cond(on, 59*time.Minute)}, on, true, at(time.Hour), at(59 * time.Minute)},
		{"the same False verdict, however old: nothing", []corev1.NodeCondition{cond(off, 0)}, off, false, metav1.Time{}, metav1.Time{}},
		{"not judged any more: False, a transition", []corev1.NodeCondition{cond(on, 0)}, NotJudged(), true, at(time.Hour), at(time.Hour)},
		{"a new message: the heartbeat moves, the transition does not", []corev1.NodeCondition{cond(on, 0)}, on2, true, at(time.Hour), at(0)},
		{"the storm over: False, a transition", []corev1.NodeCondition{ready, cond(on, 0)}, off, true, at(time.Hour), at(time.Hour)},
		{"True again after False: a transition", []corev1.NodeCondition{cond(off, 0)}, on, true, at(time.Hour), at(time.Hour)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, write := Next(c.conds, c.v, t0.Add(time.Hour))
			if write != c.write {
				t.Fatalf("write = %v, want %v (%+v)", write, c.write, got)
			}
			if !write {
				return
			}
			if got.Type != Type || got.Status != c.v.Status || got.Reason != c.v.Reason || got.Message != c.v.Message ||
				!got.LastHeartbeatTime.Equal(&c.heartbeat) || !got.LastTransitionTime.Equal(&c.since) {
				t.Fatalf("Next = %+v, want %+v with heartbeat %s and transition %s", got, c.v, c.heartbeat, c.since)
			}
		})
	}
}

func TestIsTrue(t *testing.T) {
	if IsTrue([]corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}, {Type: Type, Status: corev1.ConditionFalse}}) {
		t.Fatal("False is not True")
	}
	if !IsTrue([]corev1.NodeCondition{{Type: Type, Status: corev1.ConditionTrue}}) {
		t.Fatal("True is True")
	}
}
