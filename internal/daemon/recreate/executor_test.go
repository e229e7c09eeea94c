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
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

func TestStopThenSucceedWhenNewContainerRuns(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	old := h.containerID("web", "app")
	h.crr("r1", "web", nil, "app")
	okBefore := counterValue(t, "succeeded")
	stopsBefore := stopCount(t)

	h.reconcile("r1")
	if got := h.stops(); !slices.Equal(got, []string{cri.TrimContainerID(old) + "/30"}) {
		t.Fatalf("stops = %v, want the old instance with the pod's default 30 s", got)
	}
	r := h.expectPhase("r1", appsv1alpha1.RecreateRecreating, "container app: stopped "+old+" with a grace period of 30s")
	if s := r.Status.ContainerRecreateStates; len(s) != 1 || s[0].Phase != appsv1alpha1.RecreateRecreating || !s[0].IsKilled || s[0].ContainerID != old {
		t.Fatalf("states = %+v", s)
	}
	if ev := h.events(); !hasEvent(ev, "Normal Killing Stopping container app by ContainerRecreateRequest r1") {
		t.Fatalf("events = %v", ev)
	}

	// Reconciling again before the kubelet reacted stops nothing more.
	h.reconcile("r1")
	if len(h.stops()) != 1 {
		t.Fatalf("second stop: %v", h.stops())
	}

	newID := h.kubeletRestart("web", "app")
	h.reconcile("r1")
	r = h.expectPhase("r1", appsv1alpha1.RecreateSucceeded, "all 1 container(s) restarted")
	if s := r.Status.ContainerRecreateStates[0]; s.Phase != appsv1alpha1.RecreateSucceeded || s.Message != "stopped "+old+"; new container "+newID+" running" {
		t.Fatalf("state = %+v", s)
	}
	// The success is in the status; the request gets no event of its own (one write less per restart).
	if ev := h.events(); len(ev) != 0 {
		t.Fatalf("events after the success = %v, want none", ev)
	}
	if d := counterValue(t, "succeeded") - okBefore; d != 1 {
		t.Fatalf("crr_executed_total{result=succeeded} grew by %v", d)
	}
	if d := stopCount(t) - stopsBefore; d != 1 {
		t.Fatalf("container_stop_duration_seconds observed %d stops, want 1", d)
	}

	// A finished request is left alone.
	h.reconcile("r1")
	if len(h.stops()) != 1 {
		t.Fatalf("stopped after finishing: %v", h.stops())
	}
}

func TestGracePeriodSelection(t *testing.T) {
	cases := []struct {
		name     string
		strategy *int64
		pod      *int64
		want     string
	}{
		{"request (probe) value", ptr.To[int64](7), ptr.To[int64](60), "/7"},
		{"pod value", nil, ptr.To[int64](45), "/45"},
		{"default", nil, nil, "/30"},
		{"floor of 2 s", ptr.To[int64](0), nil, "/2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.pod("web", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = tc.pod }, "app")
			h.crr("r", "web", func(r *appsv1alpha1.ContainerRecreateRequest) {
				r.Spec.Strategy.TerminationGracePeriodSeconds = tc.strategy
			}, "app")
			h.reconcile("r")
			if s := h.stops(); len(s) != 1 || !strings.HasSuffix(s[0], tc.want) {
				t.Fatalf("stops = %v, want timeout %s", s, tc.want)
			}
		})
	}
}

func TestAlreadyRestartedIsNotStoppedAgain(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("r", "web", nil, "app")
	newID := h.kubeletRestart("web", "app") // restarted by itself before the daemon got to it
	h.reconcile("r")
	if len(h.stops()) != 0 {
		t.Fatalf("stopped a replacement: %v", h.stops())
	}
	r := h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "")
	if s := r.Status.ContainerRecreateStates[0]; s.IsKilled || !strings.Contains(s.Message, "had already been replaced; new container "+newID) {
		t.Fatalf("state = %+v", s)
	}
}

func TestForceRecreateStopsTheReplacement(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("r", "web", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Spec.Strategy.ForceRecreate = true }, "app")
	replacement := h.kubeletRestart("web", "app")
	h.reconcile("r")
	if s := h.stops(); len(s) != 1 || !strings.HasPrefix(s[0], cri.TrimContainerID(replacement)+"/") {
		t.Fatalf("stops = %v, want the replacement %s", s, replacement)
	}
	if s := h.get("r").Status.ContainerRecreateStates[0]; s.ContainerID != replacement || !s.IsKilled {
		t.Fatalf("state = %+v", s)
	}
	h.kubeletRestart("web", "app")
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "")
}

func TestOrderedRecreateOneAfterTheOther(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "a", "b")
	a1, b1 := h.containerID("web", "a"), h.containerID("web", "b")
	h.crr("r", "web", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Spec.Strategy.OrderedRecreate = true }, "a", "b")

	h.reconcile("r")
	if s := h.stops(); len(s) != 1 || !strings.HasPrefix(s[0], cri.TrimContainerID(a1)) {
		t.Fatalf("first pass stops = %v, want only a", s)
	}
	st := h.get("r").Status.ContainerRecreateStates
	if st[1].Phase != appsv1alpha1.RecreatePending || !strings.Contains(st[1].Message, "waiting for container a") {
		t.Fatalf("b = %+v", st[1])
	}
	h.reconcile("r") // a not back yet: b still waits
	if len(h.stops()) != 1 {
		t.Fatalf("stops = %v", h.stops())
	}
	h.kubeletRestart("web", "a")
	h.reconcile("r")
	if s := h.stops(); len(s) != 2 || !strings.HasPrefix(s[1], cri.TrimContainerID(b1)) {
		t.Fatalf("stops = %v, want b second", s)
	}
	h.kubeletRestart("web", "b")
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "all 2 container(s) restarted")
}

func TestUnorderedRecreateAllAtOnce(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "a", "b")
	h.crr("r", "web", nil, "a", "b")
	h.reconcile("r")
	if s := h.stops(); len(s) != 2 {
		t.Fatalf("stops = %v, want both", s)
	}
	h.kubeletRestart("web", "b")
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateRecreating, "container a:")
	h.kubeletRestart("web", "a")
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "")
}

func TestMinStartedSeconds(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("r", "web", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Spec.Strategy.MinStartedSeconds = 20 }, "app")
	h.reconcile("r")
	h.kubeletRestart("web", "app")
	h.clock.Step(5 * time.Second)
	if res := h.reconcile("r"); res.RequeueAfter != 10*time.Second {
		// the poll interval (10 s) is shorter than the 15 s still to run
		t.Fatalf("RequeueAfter = %v", res.RequeueAfter)
	}
	h.expectPhase("r", appsv1alpha1.RecreateRecreating, "minStartedSeconds (20)")
	h.clock.Step(10 * time.Second)
	if res := h.reconcile("r"); res.RequeueAfter != 5*time.Second {
		t.Fatalf("RequeueAfter = %v, want the 5 s left", res.RequeueAfter)
	}
	h.clock.Step(5 * time.Second)
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "")
}

// The manager owns timeouts: at the deadline the daemon stops acting on the request and writes
// no outcome of its own.
func TestDeadlineIsLeftToTheManager(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("r", "web", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) }, "app")
	failedBefore := counterValue(t, "failed")
	h.reconcile("r")
	h.clock.Step(55 * time.Second)
	if res := h.reconcile("r"); res.RequeueAfter != 5*time.Second {
		t.Fatalf("RequeueAfter = %v, want the time to the deadline", res.RequeueAfter)
	}
	h.clock.Step(5 * time.Second)
	before := h.get("r").ResourceVersion
	if res := h.reconcile("r"); res.RequeueAfter != 0 {
		t.Fatalf("RequeueAfter = %v after the deadline, want none", res.RequeueAfter)
	}
	r := h.expectPhase("r", appsv1alpha1.RecreateRecreating, "container app: stopped")
	if r.ResourceVersion != before {
		t.Fatal("the daemon wrote the request after its deadline")
	}
	if d := counterValue(t, "failed") - failedBefore; d != 0 {
		t.Fatalf("crr_executed_total{result=failed} grew by %v", d)
	}
}

func TestFailurePolicies(t *testing.T) {
	for _, policy := range []appsv1alpha1.ContainerRecreateRequestFailurePolicy{appsv1alpha1.FailurePolicyFail, appsv1alpha1.FailurePolicyIgnore} {
		t.Run(string(policy), func(t *testing.T) {
			var failing atomic.Value // the CRI ID whose stop fails
			failing.Store("")
			h := newHarness(t, func(s *critest.Server) {
				s.StopFunc = func(id string, _ int64) error {
					if id == failing.Load().(string) {
						return grpcstatus.Error(codes.Internal, "runc: permission denied")
					}
					return nil
				}
			})
			h.pod("web", nil, "a", "b")
			b1 := cri.TrimContainerID(h.containerID("web", "b"))
			failing.Store(b1)
			h.crr("r", "web", func(r *appsv1alpha1.ContainerRecreateRequest) {
				r.Spec.Strategy.FailurePolicy = policy
				r.Spec.Strategy.OrderedRecreate = true
			}, "b", "a")
			h.reconcile("r")
			if policy == appsv1alpha1.FailurePolicyFail {
				h.expectPhase("r", appsv1alpha1.RecreateFailed, "container b: stopping critest://"+b1+" failed")
				if len(h.stops()) != 1 {
					t.Fatalf("a must not be stopped after b failed: %v", h.stops())
				}
				return
			}
			// Ignore: b is recorded as failed and a, next in order, is stopped in the same pass.
			if len(h.stops()) != 2 {
				t.Fatalf("stops = %v", h.stops())
			}
			h.kubeletRestart("web", "a")
			h.reconcile("r")
			r := h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "not restarted (failurePolicy Ignore): b: stopping")
			if s := r.Status.ContainerRecreateStates; s[0].Phase != appsv1alpha1.RecreateFailed || s[1].Phase != appsv1alpha1.RecreateSucceeded {
				t.Fatalf("states = %+v", s)
			}
		})
	}
}

// A transient runtime error (here: the runtime is restarting) is retried, not a failure: the
// container keeps its turn until the stop goes through or the deadline passes.
func TestTransientStopErrorIsRetried(t *testing.T) {
	for name, tc := range map[string]struct {
		failures  int // StopContainer calls answered Unavailable before it works
		wantPhase appsv1alpha1.ContainerRecreateRequestPhase
		wantMsg   string
	}{
		"recovers": {failures: 2, wantPhase: appsv1alpha1.RecreateSucceeded},
		// Past the deadline the daemon stops retrying and leaves the failure to the manager.
		"until the deadline": {failures: 1000, wantPhase: appsv1alpha1.RecreateRecreating, wantMsg: "container app: stopping"},
	} {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			h := newHarness(t, func(s *critest.Server) {
				s.StopFunc = func(string, int64) error {
					if int(calls.Add(1)) <= tc.failures {
						return grpcstatus.Error(codes.Unavailable, "connection refused")
					}
					return nil
				}
			})
			h.pod("web", nil, "app")
			h.crr("r", "web", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) }, "app")
			if res := h.reconcile("r"); res.RequeueAfter != transientRetryDelay {
				t.Fatalf("RequeueAfter = %v, want the retry delay %v", res.RequeueAfter, transientRetryDelay)
			}
			h.expectPhase("r", appsv1alpha1.RecreateRecreating, "will retry: rpc error: code = Unavailable")
			for range 40 {
				if h.get("r").Status.Phase.Finished() || calls.Load() > int32(tc.failures) || h.clock.Now().After(h.get("r").Deadline()) {
					break
				}
				h.clock.Step(transientRetryDelay)
				h.reconcile("r")
			}
			if tc.wantPhase == appsv1alpha1.RecreateSucceeded {
				if got := calls.Load(); got != int32(tc.failures)+1 {
					t.Fatalf("StopContainer called %d times, want %d", got, tc.failures+1)
				}
				h.kubeletRestart("web", "app")
				h.reconcile("r")
			}
			h.expectPhase("r", tc.wantPhase, tc.wantMsg)
			if tc.wantPhase != appsv1alpha1.RecreateSucceeded {
				n := calls.Load()
				h.clock.Step(transientRetryDelay)
				h.reconcile("r")
				if calls.Load() != n {
					t.Fatal("StopContainer called again after the deadline")
				}
			}
		})
	}
}

// The manager owns missing pods: the daemon neither stops anything nor writes an outcome.
func TestPodGoneIsLeftToTheManager(t *testing.T) {
	cases := map[string]struct {
		change func(h *harness, p *corev1.Pod)
		want   string
	}{
		"deleted": {func(h *harness, p *corev1.Pod) { _ = h.c.Delete(h.ctx, p) }, "pod is gone"},
		"replaced": {func(h *harness, p *corev1.Pod) {
			_ = h.c.Delete(h.ctx, p)
			p.ResourceVersion = ""
			p.UID = "other"
			_ = h.c.Create(h.ctx, p)
		}, "pod was replaced"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			p := h.pod("web", nil, "app")
			h.crr("r", "web", nil, "app")
			h.reconcile("r")
			stops := len(h.stops())
			tc.change(h, p)
			before := h.get("r").ResourceVersion
			h.reconcile("r")
			if r := h.get("r"); r.ResourceVersion != before || r.Status.Phase.Finished() {
				t.Fatalf("the daemon wrote the request of a pod that %s: %+v", tc.want, r.Status)
			}
			if len(h.stops()) != stops {
				t.Fatalf("stopped a container of a pod that %s", tc.want)
			}
		})
	}
}

func TestRestartPolicyNeverIsRefused(t *testing.T) {
	h := newHarness(t)
	h.pod("job", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }, "app")
	h.crr("r", "job", nil, "app")
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateFailed, "container app: restartPolicy is Never")
	if len(h.stops()) != 0 {
		t.Fatalf("stopped a container of a Never pod: %v", h.stops())
	}
	if ev := h.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning Failed container app: restartPolicy is Never") {
		t.Fatalf("events = %v, want the Warning Failed of the request", ev)
	}
}

func TestDecisionControllerKillingMessage(t *testing.T) {
	for name, mutate := range map[string]func(*appsv1alpha1.ContainerRecreateRequest){
		"label": func(r *appsv1alpha1.ContainerRecreateRequest) {
			r.Labels[appsv1alpha1.LabelManagedBy] = appsv1alpha1.ManagedByDecisionController
		},
		"annotation": func(r *appsv1alpha1.ContainerRecreateRequest) {
			r.Annotations = map[string]string{appsv1alpha1.AnnotationCRRProbe: "liveness"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.pod("web", nil, "app")
			h.crr("r", "web", mutate, "app")
			h.reconcile("r")
			if ev := h.events(); !hasEvent(ev, "Normal Killing Container app failed liveness probe, will be restarted") {
				t.Fatalf("events = %v", ev)
			}
		})
	}
}

// TestFirstStepAsksTheRuntimeOnlyInTheStop: the step that stops the instance the request names
// reads its status from the runtime once, in the stop itself (whether it already exited); the
// plan needs the runtime's confirmation only for a successor, which is still asked for.
func TestFirstStepAsksTheRuntimeOnlyInTheStop(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("r1", "web", nil, "app")
	h.reconcile("r1")
	if n := len(h.srv.Calls("ContainerStatus")); n != 1 || len(h.stops()) != 1 {
		t.Fatalf("ContainerStatus calls = %d, stops = %v; want 1 status read (the stop's) and 1 stop", n, h.stops())
	}
	h.kubeletRestart("web", "app")
	h.reconcile("r1")
	if n := len(h.srv.Calls("ContainerStatus")); n != 2 {
		t.Fatalf("ContainerStatus calls = %d after the restart, want the successor confirmed (2)", n)
	}
	h.expectPhase("r1", appsv1alpha1.RecreateSucceeded, "all 1 container(s) restarted")
}
