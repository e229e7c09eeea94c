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
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// TestWriter_NewFailureWaitsOnlyTheFailureWindow: changes within the write window of the
// last write are gathered into one write at its end, except that a probe becoming Failed is
// written FailureWindow after the last write (the decision to restart waits for it), and a
// window after the write before, so that there are never more than two writes per window.
func TestWriter_NewFailureWaitsOnlyTheFailureWindow(t *testing.T) {
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	cl := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithStatusSubresource(rep).WithObjects(rep).Build()

	t0 := time.Unix(1000, 0)
	clk := clocktesting.NewFakeClock(t0)
	cache := results.NewCache()
	w := &Writer{Client: cl, NodeName: "node-a", Results: cache, Clock: clk,
		Window: 300 * time.Millisecond, FailureWindow: 50 * time.Millisecond}
	w.SetPlan(&Plan{Generation: 1, Pods: []PlannedPod{plannedPod("web", "u1", "p1", "app", "p2", "side")}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	k1, k2 := results.Key{PodUID: "u1", Container: "app", Probe: "p1"}, results.Key{PodUID: "u1", Container: "side", Probe: "p2"}
	writes := func(want int64, what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); w.Writes() != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d status writes, want %d", what, w.Writes(), want)
			}
		}
	}
	quiet := func(want int64, what string) {
		t.Helper()
		time.Sleep(200 * time.Millisecond) // a write that should not happen has this long to show
		if got := w.Writes(); got != want {
			t.Fatalf("%s: %d status writes, want still %d", what, got, want)
		}
	}
	state := func(probe string) appsv1alpha1.ProbeState {
		got := &appsv1alpha1.NodePodProbeReport{}
		if err := cl.Get(ctx, client.ObjectKey{Name: "node-a"}, got); err != nil {
			t.Fatal(err)
		}
		for _, ps := range got.Status.PodProbeStatuses {
			for _, s := range ps.ProbeStates {
				if s.Name == probe {
					return s.State
				}
			}
		}
		return ""
	}

	cache.Set(k1, appsv1alpha1.ProbeSucceeded, "containerd://a", "", clk.Now(), results.WriteInWindow)
	writes(1, "first change after a quiet period (leading edge)")

	cache.Set(k2, appsv1alpha1.ProbeSucceeded, "containerd://b", "", clk.Now(), results.WriteInWindow)
	clk.Step(100 * time.Millisecond)
	quiet(1, "a success 100 ms after the last write, window 300 ms")
	cache.Set(k1, appsv1alpha1.ProbeFailed, "containerd://a", "HTTP probe failed with statuscode: 500", clk.Now(), results.WriteSoon)
	writes(2, "a new failure 100 ms after the last write, failure window 50 ms")
	// A passing probe is not listed: p2's pending success shows as its absence.
	if state("p1") != appsv1alpha1.ProbeFailed || state("p2") != "" {
		t.Fatalf("the write carries p1 %q, p2 %q; want the failure and the pending success", state("p1"), state("p2"))
	}

	// Other changes still wait the whole window: a new container not probed yet.
	cache.Set(k2, appsv1alpha1.ProbeUnknown, "containerd://b2", "", clk.Now(), results.WriteInWindow)
	clk.Step(200 * time.Millisecond)
	quiet(2, "a new container 200 ms after the last write")
	clk.Step(100 * time.Millisecond)
	writes(3, "the window's trailing write")

	// A failure right after a write waits for the failure window, not less.
	clk.Step(10 * time.Millisecond)
	cache.Set(k2, appsv1alpha1.ProbeFailed, "containerd://b2", "exit code 1", clk.Now(), results.WriteSoon)
	quiet(3, "a new failure 10 ms after the last write")
	clk.Step(40 * time.Millisecond)
	writes(4, "the failure window's end")
	if state("p2") != appsv1alpha1.ProbeFailed {
		t.Fatalf("p2 %q, want Failed", state("p2"))
	}

	// Two writes 50 ms apart: a third, early for a failure, still waits for a window after the
	// first of them.
	clk.Step(10 * time.Millisecond)
	cache.Set(k1, appsv1alpha1.ProbeSucceeded, "containerd://a2", "", clk.Now(), results.WriteInWindow)
	cache.Set(k1, appsv1alpha1.ProbeFailed, "containerd://a2", "timeout", clk.Now(), results.WriteSoon)
	clk.Step(190 * time.Millisecond)
	quiet(4, "a new failure 200 ms after a write that came 50 ms after its own previous")
	clk.Step(50 * time.Millisecond)
	writes(5, "a window after the write before the last")
}
