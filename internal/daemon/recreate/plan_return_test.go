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
	"sync/atomic"
	"testing"
	"time"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestReturnWait(t *testing.T) {
	inFlight := state("app", recreating, "c://old", false)
	inFlight.Message, inFlight.StopInFlight = "stopping c://old", true
	returned := func(o stopOutcome, ago time.Duration) map[string]stopMemo {
		return map[string]stopMemo{"c://old": {result: &stopResult{outcome: o, message: "stopped c://old", at: t0.Add(-ago)}}}
	}
	app := []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")}
	oldRuns := map[string]Observed{"app": running("c://old", time.Minute)}
	cases := []struct {
		name   string
		states []appsv1alpha1.ContainerRecreateState
		obs    map[string]Observed
		stops  map[string]stopMemo
		window time.Duration
		now    time.Time // default t0; the deadline is t0 + 1 min
		want   time.Duration
	}{
		{name: "a stop that went through 1s ago waits out the rest of the window",
			states: []appsv1alpha1.ContainerRecreateState{inFlight}, obs: oldRuns, stops: returned(stopped, time.Second),
			window: 5 * time.Second, want: 4 * time.Second},
		{name: "the old instance gone from pod status, no successor yet: still waits",
			states: []appsv1alpha1.ContainerRecreateState{inFlight}, obs: map[string]Observed{"app": {InSpec: true,
				RestartPolicy: "Always", ContainerID: "c://old"}}, stops: returned(stopped, 2*time.Second),
			window: 5 * time.Second, want: 3 * time.Second},
		{name: "the window has passed: written",
			states: []appsv1alpha1.ContainerRecreateState{inFlight}, obs: oldRuns, stops: returned(stopped, 5*time.Second),
			window: 5 * time.Second},
		{name: "no window: written at once",
			states: []appsv1alpha1.ContainerRecreateState{inFlight}, obs: oldRuns, stops: returned(stopped, 0)},
		{name: "a stop that found the container gone is written at once",
			states: []appsv1alpha1.ContainerRecreateState{inFlight}, obs: oldRuns, stops: returned(alreadyStopped, 0),
			window: 5 * time.Second},
		{name: "a stop that failed is written at once",
			states: []appsv1alpha1.ContainerRecreateState{inFlight}, obs: oldRuns, stops: returned(stopFailed, 0),
			window: 5 * time.Second},
		{name: "the successor runs: the success is written",
			states: []appsv1alpha1.ContainerRecreateState{inFlight}, obs: map[string]Observed{"app": running("c://new", time.Minute)},
			stops: returned(stopped, time.Second), window: 5 * time.Second},
		{name: "the first step (the fence) is never held",
			obs: oldRuns, window: 5 * time.Second},
		{name: "past the deadline the return is written",
			states: []appsv1alpha1.ContainerRecreateState{inFlight}, stops: returned(stopped, time.Second),
			window: 5 * time.Second, now: t0.Add(time.Minute)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.now
			if now.IsZero() {
				now = t0
			}
			p := Advance(Observation{Containers: app, States: tc.states, Observed: tc.obs, Stops: tc.stops,
				FirstSeen: t0.Add(-time.Hour), Now: now, Deadline: t0.Add(time.Minute), ReturnWindow: tc.window})
			if p.WriteAfter != tc.want {
				t.Errorf("WriteAfter = %v, want %v (plan %+v)", p.WriteAfter, tc.want, p)
			}
		})
	}
}

// countStatusWrites counts the executor's status writes that the API accepted.
func countStatusWrites(h *harness) *atomic.Int32 {
	return countStatusPatches(h, func(err error) bool { return err == nil })
}

// A restart in which the kubelet starts the new container within the window costs two status
// writes: the one before the stop, and the success, which records the stop's return too.
func TestStopReturnIsWrittenWithTheNewContainer(t *testing.T) {
	h := newHarness(t)
	h.e.ReturnWriteWindow = 5 * time.Second
	writes := countStatusWrites(h)
	h.pod("web", nil, "app")
	old := h.containerID("web", "app")
	h.crr("r", "web", nil, "app")
	if res := h.reconcile("r"); res.RequeueAfter != 5*time.Second {
		t.Fatalf("RequeueAfter = %v after the stop returned, want the window", res.RequeueAfter)
	}
	if s := h.get("r").Status.ContainerRecreateStates[0]; !s.StopInFlight || s.IsKilled || writes.Load() != 1 {
		t.Fatalf("after the stop returned: state %+v, %d writes; want only the write before the stop", s, writes.Load())
	}
	h.clock.Step(time.Second)
	id := h.kubeletRestart("web", "app")
	h.reconcile("r")
	r := h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "")
	s := r.Status.ContainerRecreateStates[0]
	if !s.IsKilled || s.StopInFlight || s.Message != "stopped "+old+"; new container "+id+" running" || writes.Load() != 2 {
		t.Fatalf("state %+v after %d writes", s, writes.Load())
	}
	if len(h.stops()) != 1 {
		t.Fatalf("stops = %v", h.stops())
	}
}

// Without a new container within the window, the return is written on its own once the window
// has passed: the request no longer shows a stop in flight.
func TestStopReturnIsWrittenAfterTheWindow(t *testing.T) {
	h := newHarness(t)
	h.e.ReturnWriteWindow = 5 * time.Second
	writes := countStatusWrites(h)
	h.pod("web", nil, "app")
	h.crr("r", "web", nil, "app")
	h.reconcile("r")
	h.clock.Step(2 * time.Second)
	if res := h.reconcile("r"); res.RequeueAfter != 3*time.Second || writes.Load() != 1 {
		t.Fatalf("RequeueAfter = %v after %d writes, want the rest of the window and no write", res.RequeueAfter, writes.Load())
	}
	h.clock.Step(3 * time.Second)
	h.reconcile("r")
	r := h.expectPhase("r", appsv1alpha1.RecreateRecreating, "waiting for the kubelet to start a new container")
	if s := r.Status.ContainerRecreateStates[0]; s.StopInFlight || !s.IsKilled || writes.Load() != 2 {
		t.Fatalf("state %+v after %d writes", s, writes.Load())
	}
	h.kubeletRestart("web", "app")
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "")
	if writes.Load() != 3 || len(h.stops()) != 1 {
		t.Fatalf("%d writes, stops %v", writes.Load(), h.stops())
	}
}
