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

package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(d)) }

func TestBuild(t *testing.T) {
	held := func(pod string, r policyv1alpha1.HoldReason, since time.Duration) policyv1alpha1.HeldPod {
		return policyv1alpha1.HeldPod{Pod: pod, Container: "app", Reason: r, Since: at(since)}
	}
	a := policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "a"},
		Status: policyv1alpha1.EnhancedLivenessPolicyStatus{HeldPodsTotal: 2,
			HeldPods: []policyv1alpha1.HeldPod{held("web-1", "FailureStorm", -time.Minute), held("web-2", "MaxUnavailable", -3*time.Minute)},
			Figures: &policyv1alpha1.EnrollingFigures{WindowStart: at(-time.Hour), Workloads: []policyv1alpha1.WorkloadFigures{
				{Mode: "Shadow", Avoided: 5, Agreed: 1, AddedMaxSeconds: 4}, {Mode: "Enforce", Avoided: 2, Agreed: 3, AddedMaxSeconds: 40}}}}}
	why := "2 of 4 pods of Deployment/web are unavailable, maxUnavailable is 1 (policy shop/a)"
	a.Status.HeldPods[1].Message = why
	b := policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "b"},
		Spec:   policyv1alpha1.EnhancedLivenessPolicySpec{Mode: policyv1alpha1.ModeShadow},
		Status: policyv1alpha1.EnhancedLivenessPolicyStatus{HeldPodsTotal: 1, HeldPods: []policyv1alpha1.HeldPod{held("web-1", "FailureStorm", -time.Minute)}}}
	open := policyv1alpha1.RestartHold{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "open"}, Status: policyv1alpha1.RestartHoldStatus{
		Workload: policyv1alpha1.WorkloadReference{Kind: "Deployment", Name: "web"}, Container: "app", Reason: "FailureStorm", Onset: at(-time.Minute),
		NextCanary: ptr.To(at(30 * time.Second))}}
	released := open
	released.Name, released.Status.ReleasedAt = "released", ptr.To(at(-time.Second))
	ev := func(pod, why string, seen time.Duration) corev1.Event {
		return corev1.Event{Reason: "LivenessNotProbed", Action: why, Message: "1 container not probed", LastTimestamp: at(seen),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: pod}}
	}
	lease := func(node string, renewed time.Duration) coordinationv1.Lease {
		return coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "enhanced-liveness-daemon-" + node},
			Spec: coordinationv1.LeaseSpec{RenewTime: ptr.To(metav1.NewMicroTime(now.Add(renewed))), LeaseDurationSeconds: ptr.To[int32](40)}}
	}
	storm := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: "EnhancedLivenessNodeStorm", Status: corev1.ConditionTrue, Reason: "NodeStorm", Message: "6 of 8 pods"}}}}
	s := Build(Inputs{Scope: "shop", Policies: []policyv1alpha1.EnhancedLivenessPolicy{a, b}, Holds: []policyv1alpha1.RestartHold{open, released},
		Events: []corev1.Event{ev("web-3", "NotMapped", -2*time.Minute), ev("web-3", "NoDaemonReport", -time.Minute), ev("old", "NotProbed", -time.Hour)},
		Nodes:  []corev1.Node{storm, {ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}, {ObjectMeta: metav1.ObjectMeta{Name: "node-c"}}},
		Leases: []coordinationv1.Lease{lease("node-a", -time.Second), lease("node-b", -time.Minute)}, Now: now})

	if p := s.Policies[0]; p.Mode != "Enforce" || p.HeldNow != 2 || p.HeldByReason["MaxUnavailable"] != 1 || !p.OldestHold.Equal(now.Add(-3*time.Minute)) ||
		p.Avoided != 7 || p.Agreed != 4 || p.AddedMax != 40 {
		t.Errorf("policy a %+v", p)
	}
	if len(s.Held) != 2 || s.Held[0].Pod != "web-2" || s.Held[1].Pod != "web-1" {
		t.Errorf("held %+v: want web-2 then web-1, once though two policies list it", s.Held)
	}
	if s.Held[0].Message != why || s.Held[1].Message != "" {
		t.Errorf("held %+v: want web-2's status message, none for web-1", s.Held)
	}
	if len(s.Holds) != 1 || s.Holds[0].Name != "open" || s.Holds[0].Workload != "Deployment web" {
		t.Errorf("holds %+v: want the open hold only", s.Holds)
	}
	if len(s.Unprobed) != 1 || s.Unprobed[0].Why != "NoDaemonReport" {
		t.Errorf("unprobed %+v: want web-3's latest reason, not the hour-old event", s.Unprobed)
	}
	if len(s.Nodes) != 2 || s.Nodes[0].Storm != "NodeStorm" || s.Nodes[0].DaemonLease != "" || s.Nodes[1].Name != "node-b" || s.Nodes[1].DaemonLease == "" {
		t.Errorf("nodes %+v: want node-a (storm, lease current) and node-b (lease expired); node-c has no daemon", s.Nodes)
	}
	var out bytes.Buffer
	if err := Write(&out, s, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Enhanced liveness in shop", "2 (FailureStorm 1, MaxUnavailable 1)", "HELD FOR  MESSAGE", "3m0s      " + why, "in 30s", "NoDaemonReport", "True (NodeStorm): 6 of 8 pods", "expired, renewed 1m0s ago"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
}
