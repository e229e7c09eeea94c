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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestJudge(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	h := func(ns, pod, workload string, passing int, since time.Duration) Held {
		return Held{Namespace: ns, Pod: pod, Workload: workload, PassingElsewhere: passing, Since: t0.Add(since)}
	}
	cases := []struct {
		name string
		held []Held
		want corev1.ConditionStatus
		msg  string
	}{
		{"nothing held", nil, corev1.ConditionFalse, "no node storm of 2 or more namespaces"},
		{"one namespace can never set it, however many pods", []Held{
			h("a", "p1", "Deployment/x", 3, 0), h("a", "p2", "Deployment/y", 3, 0), h("a", "p3", "Deployment/z", 3, 0),
		}, corev1.ConditionFalse, "no node storm"},
		{"two namespaces whose workloads pass elsewhere", []Held{
			h("b", "p2", "Deployment/y", 2, time.Second), h("a", "p1", "Deployment/x", 1, 2*time.Second), h("b", "p3", "Deployment/y", 2, 0),
		}, corev1.ConditionTrue, "restarts of 3 pods of 2 workloads in 2 namespaces (a: 1, b: 2) are held NodeStorm on node n1 since 2026-12-04T12:00:00Z"},
		{"a namespace whose workload fails everywhere does not count", []Held{
			h("a", "p1", "Deployment/x", 1, 0), h("b", "p2", "Deployment/y", 0, 0),
		}, corev1.ConditionFalse, "no node storm"},
		{"nothing passes elsewhere: the apps may be at fault, not the node", []Held{
			h("a", "p1", "Deployment/x", 0, 0), h("b", "p2", "Deployment/y", 0, 0),
		}, corev1.ConditionFalse, "no node storm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Judge("n1", c.held)
			if v.Status != c.want || !strings.Contains(v.Message, c.msg) {
				t.Fatalf("Judge = %+v, want status %s and a message with %q", v, c.want, c.msg)
			}
			wantReason := map[corev1.ConditionStatus]string{corev1.ConditionTrue: ReasonHeld, corev1.ConditionFalse: ReasonNone}[c.want]
			if v.Reason != wantReason {
				t.Fatalf("reason %q, want %q", v.Reason, wantReason)
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
		{"the same verdict again: nothing", []corev1.NodeCondition{ready, cond(on, 0)}, on, false, metav1.Time{}, metav1.Time{}},
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
