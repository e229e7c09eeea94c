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

package prober

import (
	"context"
	"testing"
	"time"
)

// A worker has no goroutine between runs: these pin what its timer must keep of the loop it
// replaced.

func TestWorker_RunsNeverOverlapAndAnOverrunSkipsItsSlots(t *testing.T) {
	f := newFixture(t)
	release := f.holdRequests()
	w := f.worker(f.target(3)) // period 10 s; the daemon started an hour ago: the first run is now
	w.start(context.Background())
	defer w.stop()
	waitFor(t, func() bool { return f.requests.Load() == 1 })
	// The run hangs past three periods: no second run starts beside it.
	f.clk.Step(35 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := f.requests.Load(); n != 1 {
		t.Fatalf("%d runs started while the first was in flight", n)
	}
	release()
	// The missed slots (10, 20, 30 s) are skipped: the next run is at 40 s, not at once.
	waitFor(t, f.clk.HasWaiters)
	time.Sleep(50 * time.Millisecond)
	if n := f.requests.Load(); n != 1 {
		t.Fatalf("%d runs after the overrun, want the next one at the next slot", n)
	}
	f.clk.Step(5 * time.Second)
	waitFor(t, func() bool { return f.requests.Load() == 2 })
	if m := f.maxInFlight.Load(); m != 1 {
		t.Errorf("%d runs were in flight at once, want 1", m)
	}
}

func TestWorker_StopWaitsForTheRunInFlightAndEndsTheSchedule(t *testing.T) {
	f := newFixture(t)
	release := f.holdRequests()
	w := f.worker(f.target(3))
	w.start(context.Background())
	waitFor(t, func() bool { return f.requests.Load() == 1 })

	w.stop()
	finished := make(chan struct{})
	go func() { f.m.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		t.Fatal("the manager's wait returned while a run was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("the manager's wait did not return after the run in flight ended")
	}
	// Stopped: no timer left, and time passing runs nothing.
	if f.clk.HasWaiters() {
		t.Error("a stopped worker left a timer armed")
	}
	f.clk.Step(time.Minute)
	time.Sleep(50 * time.Millisecond)
	if n := f.requests.Load(); n != 1 {
		t.Errorf("%d runs, want none after stop", n)
	}
}

func TestWorker_StopBetweenRunsDisarmsTheTimer(t *testing.T) {
	f := newFixture(t)
	w := f.worker(f.target(3))
	w.start(context.Background())
	waitFor(t, func() bool { return f.requests.Load() == 1 && f.clk.HasWaiters() })
	w.stop()
	if f.clk.HasWaiters() {
		t.Fatal("the next run's timer is still armed after stop")
	}
	f.m.wg.Wait() // returns: nothing in flight
	f.clk.Step(time.Minute)
	time.Sleep(50 * time.Millisecond)
	if n := f.requests.Load(); n != 1 {
		t.Errorf("%d runs, want none after stop", n)
	}
}
