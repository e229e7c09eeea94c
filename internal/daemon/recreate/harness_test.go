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

package recreate

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

const testNode = "node-a"

// harness is one executor against a fake API client and the test CRI server on a unix socket.
type harness struct {
	t     *testing.T
	ctx   context.Context
	srv   *critest.Server
	c     client.Client
	clock *clocktesting.FakeClock
	rec   *events.FakeRecorder
	e     *Executor
}

// newHarness starts the test CRI server; configure sets its hooks before it serves (they are
// read by the server's goroutines).
func newHarness(t *testing.T, configure ...func(*critest.Server)) *harness {
	t.Helper()
	srv := &critest.Server{PodIP: "127.0.0.1"} // the pods' sandboxes' address, where hooks connect
	for _, c := range configure {
		c(srv)
	}
	dir, err := os.MkdirTemp("", "rc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ep, err := srv.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rt, err := cri.Connect(context.Background(), ep, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme()).
		WithStatusSubresource(&appsv1alpha1.ContainerRecreateRequest{}, &corev1.Pod{}).Build()
	h := &harness{t: t, ctx: context.Background(), srv: srv, c: c, clock: clocktesting.NewFakeClock(t0),
		rec: events.NewFakeRecorder(100)}
	// A stop's return is written at once: the tests of the return's wait for the new container
	// (plan_return_test.go) set the window themselves.
	h.e = &Executor{Client: c, APIReader: c, Runtime: rt, NodeName: testNode, Recorder: h.rec, Clock: h.clock,
		ReturnWriteWindow: -1}
	return h
}

// pod creates a running pod on the node with the named containers, each backed by a CRI container.
func (h *harness) pod(name string, mutate func(*corev1.Pod), containers ...string) *corev1.Pod {
	h.t.Helper()
	b := testutil.NewPod("default", name).OnNode(testNode).Containers(containers...).Running("127.0.0.1").
		StartedAt(h.clock.Now().Add(-time.Hour)).
		With(func(p *corev1.Pod) { p.UID, p.Spec.RestartPolicy = types.UID("uid-"+name), corev1.RestartPolicyAlways })
	for _, cn := range containers {
		b.ContainerID(cn, "critest://"+h.srv.AddContainer("uid-"+name, cn))
	}
	if mutate != nil {
		b.With(mutate)
	}
	p := b.Build()
	if err := h.c.Create(h.ctx, p); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// containerID is the current instance of a container in pod status.
func (h *harness) containerID(pod, container string) string {
	h.t.Helper()
	p := &corev1.Pod{}
	if err := h.c.Get(h.ctx, types.NamespacedName{Namespace: "default", Name: pod}, p); err != nil {
		h.t.Fatal(err)
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == container {
			return s.ContainerID
		}
	}
	h.t.Fatalf("pod %s has no container %s", pod, container)
	return ""
}

// crr creates a request for pod's containers as the webhook would have completed it.
func (h *harness) crr(name, pod string, mutate func(*appsv1alpha1.ContainerRecreateRequest), containers ...string) {
	h.t.Helper()
	r := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(h.clock.Now()),
			Labels:            map[string]string{appsv1alpha1.LabelCRRNodeName: testNode, appsv1alpha1.LabelCRRPodUID: "uid-" + pod}},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod,
			Strategy: appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1alpha1.FailurePolicyFail}},
	}
	for _, cn := range containers {
		r.Spec.Containers = append(r.Spec.Containers, appsv1alpha1.ContainerRecreateRequestContainer{Name: cn,
			StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: h.containerID(pod, cn)}})
	}
	if mutate != nil {
		mutate(r)
	}
	if err := h.c.Create(h.ctx, r); err != nil {
		h.t.Fatal(err)
	}
}

// reconcile runs one step of the request and, as the stop's wake-up would, the next step once
// the stops it started have returned. Stops that do not return within 5 s (a preStop hook
// sleeping on the fake clock) are left running for a later reconcile.
func (h *harness) reconcile(name string) ctrl.Result {
	h.t.Helper()
	for {
		started := h.e.stopsStarted.Load()
		res, err := h.e.Reconcile(h.ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: name}})
		if err != nil {
			h.t.Fatalf("Reconcile(%s): %v", name, err)
		}
		if h.e.stopsStarted.Load() == started || !h.waitStops(5*time.Second) {
			return res
		}
	}
}

// waitStops waits for the stops running in the background; false when they did not return within
// timeout.
func (h *harness) waitStops(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() { h.e.stops.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// seenAgo makes the request one this process first saw age ago: its stops then no longer go
// before the status write (StopFirstMaxAge). Stepping the clock alone is not enough, since the
// age counts from the first reconcile.
func (h *harness) seenAgo(name string, age time.Duration) {
	h.t.Helper()
	h.e.firstSeen(h.get(name), h.clock.Now())
	h.clock.Step(age)
}

func (h *harness) get(name string) *appsv1alpha1.ContainerRecreateRequest {
	h.t.Helper()
	r := &appsv1alpha1.ContainerRecreateRequest{}
	if err := h.c.Get(h.ctx, types.NamespacedName{Namespace: "default", Name: name}, r); err != nil {
		h.t.Fatal(err)
	}
	return r
}

// kubeletRestart plays the kubelet after a stop: a new instance in the runtime and in pod status.
func (h *harness) kubeletRestart(pod, container string) string {
	h.t.Helper()
	p := &corev1.Pod{}
	if err := h.c.Get(h.ctx, types.NamespacedName{Namespace: "default", Name: pod}, p); err != nil {
		h.t.Fatal(err)
	}
	for i, s := range p.Status.ContainerStatuses {
		if s.Name != container {
			continue
		}
		id, err := h.srv.Restart(cri.TrimContainerID(s.ContainerID))
		if err != nil {
			h.t.Fatal(err)
		}
		st := &p.Status.ContainerStatuses[i]
		st.ContainerID, st.RestartCount = "critest://"+id, st.RestartCount+1
		st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(h.clock.Now())}}
		if err := h.c.Status().Update(h.ctx, p); err != nil {
			h.t.Fatal(err)
		}
		return st.ContainerID
	}
	h.t.Fatalf("pod %s has no container %s", pod, container)
	return ""
}

// stops returns the CRI StopContainer calls as "id/timeout".
func (h *harness) stops() []string {
	var out []string
	for _, c := range h.srv.Calls("StopContainer") {
		out = append(out, fmt.Sprintf("%s/%d", c.ContainerID, c.Timeout))
	}
	return out
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (h *harness) expectPhase(name string, want appsv1alpha1.ContainerRecreateRequestPhase, msg string) *appsv1alpha1.ContainerRecreateRequest {
	h.t.Helper()
	r := h.get(name)
	if r.Status.Phase != want || !strings.Contains(r.Status.Message, msg) {
		h.t.Fatalf("%s: phase %q message %q; want %q containing %q", name, r.Status.Phase, r.Status.Message, want, msg)
	}
	if want.Finished() != (r.Status.CompletionTime != nil) {
		h.t.Fatalf("%s: completionTime %v with phase %s", name, r.Status.CompletionTime, r.Status.Phase)
	}
	return r
}

func hasEvent(evs []string, want string) bool {
	return slices.Contains(evs, want)
}

func counterValue(t *testing.T, result string) float64 {
	t.Helper()
	var m dto.Metric
	if err := crrExecuted.WithLabelValues(result).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func stopCount(t *testing.T) uint64 {
	t.Helper()
	var m dto.Metric
	if err := stopDuration.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

func reconcileRequest(name string) ctrl.Request {
	return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: name}}
}
