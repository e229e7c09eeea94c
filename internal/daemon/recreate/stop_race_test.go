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
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

// TestStopThatReturnedBeforeTheSuccessorIsRecorded: the kubelet may start the successor before
// the executor's next step records what its stop returned (the step that started the stop wrote
// the status before the stop). The container was stopped by this request, not "already replaced":
// the step records the stop before judging the successor.
func TestStopThatReturnedBeforeTheSuccessorIsRecorded(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("r1", "web", nil, "app")
	old := h.get("r1").Spec.Containers[0].StatusContext.ContainerID

	// One step only: it starts the stop in the background and returns.
	if _, err := h.e.Reconcile(h.ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "r1"}}); err != nil {
		t.Fatal(err)
	}
	if !h.waitStops(5 * time.Second) {
		t.Fatal("the stop did not return")
	}
	h.kubeletRestart("web", "app") // before the next step
	h.reconcile("r1")

	r := h.expectPhase("r1", appsv1alpha1.RecreateSucceeded, "all 1 container(s) restarted")
	st := r.Status.ContainerRecreateStates[0]
	if !st.IsKilled || st.ContainerID != old || !strings.HasPrefix(st.Message, "stopped "+old+"; new container ") {
		t.Fatalf("state %+v; want the stop of %s recorded (isKilled, message \"stopped …\")", st, old)
	}
}

// TestStopStillRunningWhenTheSuccessorRuns: a successor that runs while the request's own stop has
// not returned does not finish the request; the stop's return does.
func TestStopStillRunningWhenTheSuccessorRuns(t *testing.T) {
	entered, gate := make(chan struct{}, 1), make(chan struct{})
	h := newHarness(t, func(s *critest.Server) {
		s.StopFunc = func(string, int64) error { entered <- struct{}{}; <-gate; return nil }
	})
	h.pod("web", nil, "app")
	h.crr("r1", "web", nil, "app")
	if _, err := h.e.Reconcile(h.ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "r1"}}); err != nil {
		t.Fatal(err)
	}
	<-entered // StopContainer is under way
	h.kubeletRestart("web", "app")
	if _, err := h.e.Reconcile(h.ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "r1"}}); err != nil {
		t.Fatal(err)
	}
	if p := h.get("r1").Status.Phase; p.Finished() {
		t.Fatalf("phase %s while the stop is still running; want unfinished", p)
	}
	close(gate)
	if !h.waitStops(5 * time.Second) {
		t.Fatal("the stop did not return")
	}
	h.reconcile("r1")
	if st := h.expectPhase("r1", appsv1alpha1.RecreateSucceeded, "").Status.ContainerRecreateStates[0]; !st.IsKilled {
		t.Fatalf("state %+v; want isKilled", st)
	}
}

// TestStopOutlivesTheReconcileAndShutdownWaitsForIt: a stop under way when the daemon shuts down
// (its reconcile context cancelled) runs to its end and is recorded, and the executor's shutdown
// waits for it.
func TestStopOutlivesTheReconcileAndShutdownWaitsForIt(t *testing.T) {
	entered, gate := make(chan struct{}, 1), make(chan struct{})
	h := newHarness(t, func(s *critest.Server) {
		s.StopFunc = func(string, int64) error { entered <- struct{}{}; <-gate; return nil }
	})
	h.pod("web", nil, "app")
	h.crr("r1", "web", nil, "app")
	ctx, cancel := context.WithCancel(h.ctx)
	if _, err := h.e.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "r1"}}); err != nil {
		t.Fatal(err)
	}
	<-entered // StopContainer is under way
	cancel()  // the manager stops

	drained := make(chan struct{})
	go func() {
		_ = h.e.drainStops(ctx)
		close(drained)
	}()
	select {
	case <-drained:
		t.Fatal("shutdown did not wait for the stop in flight")
	case <-time.After(300 * time.Millisecond):
	}
	close(gate)
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown still waiting after the stop returned")
	}
	h.kubeletRestart("web", "app")
	h.reconcile("r1")
	if st := h.expectPhase("r1", appsv1alpha1.RecreateSucceeded, "").Status.ContainerRecreateStates[0]; !st.IsKilled ||
		!strings.HasPrefix(st.Message, "stopped ") {
		t.Fatalf("state %+v; want the stop recorded as done, not cut short by the cancelled context", st)
	}
}

// TestStopInFlightIsRecordedUntilItReturned: the status says the stop is in flight before the CRI
// call, and still past the request's deadline while the runtime hangs; once the call returns the
// daemon writes that it returned (and nothing else: the manager fails the request).
func TestStopInFlightIsRecordedUntilItReturned(t *testing.T) {
	var h *harness
	entered, gate := make(chan appsv1alpha1.ContainerRecreateRequestStatus, 1), make(chan struct{})
	h = newHarness(t, func(s *critest.Server) {
		s.StopFunc = func(string, int64) error { entered <- h.get("r1").Status; <-gate; return nil }
	})
	h.pod("web", nil, "app")
	h.crr("r1", "web", nil, "app")
	h.seenAgo("r1", StopFirstMaxAge) // the status write goes before the stop
	inFlight := func() appsv1alpha1.ContainerRecreateState {
		t.Helper()
		r := h.get("r1")
		if len(r.Status.ContainerRecreateStates) != 1 {
			t.Fatalf("status %+v", r.Status)
		}
		return r.Status.ContainerRecreateStates[0]
	}

	if _, err := h.e.Reconcile(h.ctx, reconcileRequest("r1")); err != nil {
		t.Fatal(err)
	}
	if st := <-entered; !h.get("r1").StopInFlight() || len(st.ContainerRecreateStates) != 1 || !st.ContainerRecreateStates[0].StopInFlight {
		t.Fatalf("status at the CRI stop %+v; want stopInFlight recorded before it", st)
	}

	h.clock.Step(h.get("r1").ActiveDeadline()) // the runtime hangs past the deadline
	res, err := h.e.Reconcile(h.ctx, reconcileRequest("r1"))
	if err != nil {
		t.Fatal(err)
	}
	if st := inFlight(); !st.StopInFlight || st.IsKilled || h.get("r1").Finished() {
		t.Fatalf("state %+v past the deadline with the stop in flight; want still in flight, unfinished", st)
	}
	if res.RequeueAfter == 0 {
		t.Fatal("past the deadline with a stop in flight the request must be looked at again")
	}

	close(gate)
	if !h.waitStops(5 * time.Second) {
		t.Fatal("the stop did not return")
	}
	h.reconcile("r1")
	r := h.get("r1")
	if st := inFlight(); st.StopInFlight || !st.IsKilled || r.Status.Phase != appsv1alpha1.RecreateRecreating {
		t.Fatalf("phase %s state %+v; want the return recorded (isKilled, not in flight), the request left to the manager",
			r.Status.Phase, st)
	}
	if got := len(h.stops()); got != 1 {
		t.Fatalf("%d stops; want 1 (none begun past the deadline)", got)
	}
}
