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

package policy

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/restarts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

func TestCRRNameIsDeterministicAndValid(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-7d9c-abcde", UID: "uid-1"}}
	f := func(container, id string) failure {
		return failure{container: container, state: appsv1alpha1.ContainerProbeState{ContainerID: id}}
	}
	a := crrName(pod, f("app", "containerd://1"))
	if a != crrName(pod, f("app", "containerd://1")) {
		t.Fatal("same instance, different names")
	}
	others := []string{
		crrName(pod, f("app", "containerd://2")),
		crrName(pod, f("sidecar", "containerd://1")),
		crrName(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: "uid-2"}}, f("app", "containerd://1")),
	}
	for _, o := range others {
		if o == a {
			t.Fatalf("different instance, same name %s", a)
		}
	}
	long := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 250) + ".b-", UID: "u"}}
	for _, n := range append(others, a, crrName(long, f(strings.Repeat("c", 63), "containerd://x"))) {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("%q: %v", n, errs)
		}
	}
}

// The status adds only what was counted since its last write: a failed write leaves the written
// counts as they were, so the next write adds the same decisions (and the new ones) once.
func TestAddCountsSinceTheLastWrite(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := &policyv1alpha1.EnhancedLivenessPolicyStatus{RestartsRequested: 5, RestartsHeld: 2,
		HeldByReason: []policyv1alpha1.HeldCount{{Reason: "FailureStorm", Count: 2}}}
	written := restarts.Counts{Requested: 1, Held: map[protection.Reason]int64{protection.ReasonFailureStorm: 1}}
	now := restarts.Counts{Requested: 3, LastRestart: t0,
		Held: map[protection.Reason]int64{protection.ReasonFailureStorm: 2, protection.ReasonDryRun: 4}}
	addCounts(st, now.Sub(written))
	if st.RestartsRequested != 7 || st.RestartsHeld != 7 || !st.LastRestartTime.Time.Equal(t0) {
		t.Fatalf("status = %+v", st)
	}
	want := []policyv1alpha1.HeldCount{{Reason: "FailureStorm", Count: 3}, {Reason: "DryRun", Count: 4}}
	if !slices.Equal(st.HeldByReason, want) {
		t.Fatalf("heldByReason = %v, want %v", st.HeldByReason, want)
	}
	before := *st.DeepCopy()
	addCounts(st, now.Sub(now))
	if !equality.Semantic.DeepEqual(before, *st) {
		t.Fatal("nothing new counted must change nothing")
	}
}

// A finished request gives its pod back only once the containers it stopped run again, as new
// instances, and are ready.
func TestIsRecovering(t *testing.T) {
	pod := testutil.NewPod("ns", "p").Containers("app", "side").Running("10.0.0.1").Build()
	old := testutil.ContainerIDOf(pod, "app", 1)
	killed := func(id string) []appsv1alpha1.ContainerRecreateState {
		return []appsv1alpha1.ContainerRecreateState{{Name: "app", Phase: appsv1alpha1.RecreateSucceeded, IsKilled: true, ContainerID: id}}
	}
	for _, tc := range []struct {
		name   string
		states []appsv1alpha1.ContainerRecreateState
		pod    func(*corev1.Pod)
		want   bool
	}{
		{"nothing stopped", []appsv1alpha1.ContainerRecreateState{{Name: "app", Phase: appsv1alpha1.RecreateFailed}}, nil, false},
		{"the stopped instance still runs", killed(old), nil, true},
		{"replaced and ready", killed("containerd://older"), nil, false},
		{"replaced, not ready", killed("containerd://older"), func(p *corev1.Pod) { p.Status.ContainerStatuses[0].Ready = false }, true},
		{"replaced, not running", killed("containerd://older"), func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}, true},
		{"the container is gone from the status", killed("containerd://older"), func(p *corev1.Pod) { p.Status.ContainerStatuses = p.Status.ContainerStatuses[1:] }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.DeepCopy()
			if tc.pod != nil {
				tc.pod(p)
			}
			crr := &appsv1alpha1.ContainerRecreateRequest{Status: appsv1alpha1.ContainerRecreateRequestStatus{
				Phase: appsv1alpha1.RecreateSucceeded, ContainerRecreateStates: tc.states}}
			if got := isRecovering(crr, p); got != tc.want {
				t.Fatalf("isRecovering = %v, want %v", got, tc.want)
			}
		})
	}
}
