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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	clocktesting "k8s.io/utils/clock/testing"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
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

func TestTrackerHoldsAreRecordedOncePerTransition(t *testing.T) {
	tr := newTracker(clocktesting.NewFakePassiveClock(time.Now()))
	pod := types.NamespacedName{Namespace: "ns", Name: "p"}
	h := func(r protection.Reason) podHold {
		return podHold{reason: r, workload: "ns/Deployment/web", node: "n1", policies: []string{"ns/a", "ns/b"}}
	}
	steps := []struct {
		instance string
		reason   protection.Reason
		want     bool
	}{
		{"app/1", protection.ReasonRateLimited, true},
		{"app/1", protection.ReasonRateLimited, false}, // requeue, same reason
		{"app/1", protection.ReasonMaxUnavailable, true},
		{"app/2", protection.ReasonMaxUnavailable, true}, // new container instance
		{"sidecar/1", protection.ReasonMaxUnavailable, true},
	}
	for i, s := range steps {
		if got := tr.recordHold(pod, s.instance, h(s.reason)); got != s.want {
			t.Fatalf("step %d: transition %v, want %v", i, got, s.want)
		}
	}
	for _, k := range []string{"ns/a", "ns/b"} {
		c := tr.takeCounts(k)
		if c.held[protection.ReasonRateLimited] != 1 || c.held[protection.ReasonMaxUnavailable] != 3 {
			t.Fatalf("%s counts %v", k, c.held)
		}
	}
	if got := tr.heldPods("ns/Deployment/web", "", ""); len(got) != 1 || got[0] != pod {
		t.Fatalf("held pods of the workload: %v", got)
	}
	if got := tr.heldPods("", "n2", "other"); len(got) != 0 {
		t.Fatalf("no held pods on n2 or in other: %v", got)
	}
	tr.clearHolds(pod, map[string]bool{"sidecar/1": true})
	if !tr.recordHold(pod, "app/1", h(protection.ReasonMaxUnavailable)) {
		t.Fatal("a cleared instance starts afresh")
	}
	if tr.recordHold(pod, "sidecar/1", h(protection.ReasonMaxUnavailable)) {
		t.Fatal("a kept instance keeps its hold")
	}
	tr.recordRestart(pod, "app/1", []string{"ns/a"})
	if c := tr.takeCounts("ns/a"); c.requested != 1 || c.lastRestart.IsZero() {
		t.Fatalf("restart not counted: %+v", c)
	}
}

func TestTrackerExpectations(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	tr := newTracker(clk)
	tr.expect("uid", "crr-1")
	if !tr.isExpected("uid") {
		t.Fatal("a created request counts as active until the cache shows it finished")
	}
	tr.finished("uid", "crr-other")
	if !tr.isExpected("uid") {
		t.Fatal("another request finishing does not end the expectation")
	}
	tr.finished("uid", "crr-1")
	if tr.isExpected("uid") {
		t.Fatal("seen finished: the expectation ends")
	}
	tr.expect("uid", "crr-2")
	tr.createFailed("uid", "crr-2")
	if tr.isExpected("uid") {
		t.Fatal("a create that failed is not expected")
	}
	tr.expect("uid", "crr-3")
	clk.SetTime(clk.Now().Add(expectationTTL + time.Second))
	if tr.isExpected("uid") {
		t.Fatal("an expectation never seen finished expires; the cache decides from then on")
	}
}

func TestTrackerCountsSurviveFailedWrites(t *testing.T) {
	tr := newTracker(clocktesting.NewFakePassiveClock(time.Now()))
	pod := types.NamespacedName{Namespace: "ns", Name: "p"}
	tr.recordHold(pod, "app/1", podHold{reason: protection.ReasonDryRun, policies: []string{"ns/a"}})
	c := tr.takeCounts("ns/a")
	tr.recordHold(pod, "app/2", podHold{reason: protection.ReasonDryRun, policies: []string{"ns/a"}})
	tr.putBack("ns/a", c) // the status write failed
	if got := tr.takeCounts("ns/a"); got.held[protection.ReasonDryRun] != 2 {
		t.Fatalf("counts lost: %v", got.held)
	}
	if tr.takeCounts("ns/a") != nil {
		t.Fatal("counts handed out twice")
	}
}
