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
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

func TestDaemonRestartMidwayDoesNotStopTwice(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	old := h.containerID("web", "app")
	h.crr("r", "web", nil, "app")
	// A previous daemon recorded the target and stopped it, but died before recording the stop.
	r := h.get("r")
	r.Status = appsv1alpha1.ContainerRecreateRequestStatus{Phase: appsv1alpha1.RecreateRecreating,
		ContainerRecreateStates: []appsv1alpha1.ContainerRecreateState{{Name: "app", Phase: appsv1alpha1.RecreateRecreating, ContainerID: old}}}
	if err := h.c.Status().Update(h.ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Runtime.StopContainer(h.ctx, cri.TrimContainerID(old), 2); err != nil {
		t.Fatal(err)
	}
	h.reconcile("r")
	if len(h.stops()) != 1 {
		t.Fatalf("stopped an exited container again: %v", h.stops())
	}
	before := h.expectPhase("r", appsv1alpha1.RecreateRecreating, "has already exited").Status
	h.reconcile("r") // pod status still lags: the status stays the same (no write loop), no stop
	if got := h.get("r").Status; !equality.Semantic.DeepEqual(got, before) || len(h.stops()) != 1 {
		t.Fatalf("status %+v -> %+v, stops %v", before, got, h.stops())
	}
	h.kubeletRestart("web", "app")
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "")
}

func TestRequestsNotOursAreIgnored(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("other-node", "web", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Labels[appsv1alpha1.LabelCRRNodeName] = "node-b" }, "app")
	h.crr("finished", "web", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Status.Phase = appsv1alpha1.RecreateSucceeded }, "app")
	h.reconcile("other-node")
	h.reconcile("finished")
	if len(h.stops()) != 0 || h.get("other-node").Status.Phase != "" || h.get("finished").Status.Phase != appsv1alpha1.RecreateSucceeded {
		t.Fatal("acted on a request of another node or a finished one")
	}
	if reqs := h.e.requestsForCRR(h.ctx, h.get("other-node")); len(reqs) != 0 {
		t.Fatalf("enqueued %v for another node", reqs)
	}
}

func TestManagerFailureIsNotOverwritten(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("r", "web", nil, "app")
	stale := h.get("r")
	fresh := stale.DeepCopy()
	fresh.Status.Phase, fresh.Status.Message = appsv1alpha1.RecreateFailed, "no daemon picked it up"
	fresh.Status.CompletionTime = ptr.To(metav1.NewTime(h.clock.Now()))
	if err := h.c.Status().Update(h.ctx, fresh); err != nil {
		t.Fatal(err)
	}
	conflicts := countConflicts(h)
	// A write planned from the stale copy is refused; judged again on a fresh read, the request is
	// finished, the daemon's no more, and nothing is written.
	_, p, err := h.e.write(h.ctx, stale, Observation{},
		Plan{Phase: appsv1alpha1.RecreateRecreating, Message: "x"})
	if err != nil || conflicts.Load() != 1 || p.Leave == "" {
		t.Fatalf("write on a stale copy: err %v, %d conflict(s), plan %+v; want one conflict, then left alone", err, conflicts.Load(), p)
	}
	h.expectPhase("r", appsv1alpha1.RecreateFailed, "no daemon picked it up")
}

func TestTwoRequestsOfOnePodRunOneAfterTheOther(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("first", "web", nil, "app")
	h.clock.Step(time.Second)
	h.crr("second", "web", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Spec.Strategy.ForceRecreate = true }, "app")

	h.reconcile("second")
	h.expectPhase("second", appsv1alpha1.RecreatePending, "waiting for ContainerRecreateRequest first of the same pod to finish")
	if len(h.stops()) != 0 {
		t.Fatalf("second ran before first: %v", h.stops())
	}
	// the first request's status changes enqueue the second
	if reqs := h.e.requestsForCRR(h.ctx, h.get("first")); len(reqs) != 2 {
		t.Fatalf("requestsForCRR(first) = %v, want first and second", reqs)
	}
	h.reconcile("first")
	h.reconcile("second")
	h.expectPhase("second", appsv1alpha1.RecreatePending, "")
	h.kubeletRestart("web", "app")
	h.reconcile("first")
	h.expectPhase("first", appsv1alpha1.RecreateSucceeded, "")
	h.reconcile("second")
	h.expectPhase("second", appsv1alpha1.RecreateRecreating, "")
	if len(h.stops()) != 2 {
		t.Fatalf("stops = %v", h.stops())
	}
}

// A request waiting for its pod's turn is not failed by the daemon at its deadline (the manager
// owns timeouts), and it never starts once the deadline has passed.
func TestWaitingRequestIsNotStartedAfterItsDeadline(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("first", "web", nil, "app")
	h.crr("second", "web", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) }, "app")
	h.reconcile("first")
	if res := h.reconcile("second"); res.RequeueAfter != 10*time.Second {
		t.Fatalf("RequeueAfter = %v, want the poll interval", res.RequeueAfter)
	}
	h.expectPhase("second", appsv1alpha1.RecreatePending, "waiting for ContainerRecreateRequest first of the same pod to finish")
	h.clock.Step(30 * time.Second)
	h.kubeletRestart("web", "app")
	h.reconcile("first")
	h.expectPhase("first", appsv1alpha1.RecreateSucceeded, "")
	h.reconcile("second")
	h.expectPhase("second", appsv1alpha1.RecreatePending, "waiting for ContainerRecreateRequest first")
	if len(h.stops()) != 1 {
		t.Fatalf("stops = %v: the second request must not start after its deadline", h.stops())
	}
}

// The cache can show a request from before the executor's own last write. A step planned from
// that stale copy must neither stop the container again nor overwrite the newer status.
func TestStaleCopyNeitherStopsAgainNorRegresses(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("r", "web", nil, "app")
	stale := h.get("r") // as a lagging cache would still show it
	h.reconcile("r")
	if len(h.stops()) != 1 || !h.get("r").Status.ContainerRecreateStates[0].IsKilled {
		t.Fatalf("first step: stops %v", h.stops())
	}
	conflicts := countConflicts(h)
	h.e.Client = &staleReads{Client: h.e.Client, stale: stale}
	res, err := h.e.Reconcile(h.ctx, reconcileRequest("r"))
	if err != nil || conflicts.Load() != 1 {
		t.Fatalf("step from a stale copy = %v, %v, %d conflict(s); want its write refused once, then judged again", res, err, conflicts.Load())
	}
	if len(h.stops()) != 1 {
		t.Fatalf("stopped again: %v", h.stops())
	}
	if s := h.get("r").Status.ContainerRecreateStates[0]; !s.IsKilled {
		t.Fatalf("status regressed: %+v", s)
	}
	h.e.Client = h.c
	// Even with the recorded target but no isKilled (the write after the stop was lost), the
	// executor remembers its own stop and records it instead of stopping again.
	r := h.get("r")
	r.Status.ContainerRecreateStates[0].IsKilled = false
	if err := h.c.Status().Update(h.ctx, r); err != nil {
		t.Fatal(err)
	}
	h.reconcile("r")
	if s := h.get("r").Status.ContainerRecreateStates[0]; !s.IsKilled || len(h.stops()) != 1 {
		t.Fatalf("state %+v stops %v", s, h.stops())
	}
}

// A request that is running holds its pod's turn even while the cache does not show it as
// Recreating yet: an older request seen meanwhile waits instead of running alongside.
func TestTurnIsHeldAgainstALaggingCache(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "a", "b")
	h.clock.Step(time.Second)
	h.crr("newer", "web", nil, "a")
	h.reconcile("newer")
	// The older request appears only now, and the view of "newer" has lost its phase.
	h.clock.Step(-time.Minute)
	h.crr("older", "web", nil, "b")
	r := h.get("newer")
	r.Status.Phase = ""
	if err := h.c.Status().Update(h.ctx, r); err != nil {
		t.Fatal(err)
	}
	h.reconcile("older")
	h.expectPhase("older", appsv1alpha1.RecreatePending, "waiting for ContainerRecreateRequest newer")
	if len(h.stops()) != 1 {
		t.Fatalf("both requests stopped containers: %v", h.stops())
	}
	// Once the holder finished, the turn passes on.
	h.kubeletRestart("web", "a")
	h.reconcile("newer")
	h.expectPhase("newer", appsv1alpha1.RecreateSucceeded, "")
	h.reconcile("older")
	h.expectPhase("older", appsv1alpha1.RecreateRecreating, "")
	if len(h.stops()) != 2 {
		t.Fatalf("stops = %v", h.stops())
	}
}

func TestOnlyOneWorkerClaimsAPodsTurn(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "a")
	var crrs []*appsv1alpha1.ContainerRecreateRequest
	for _, n := range []string{"r0", "r1", "r2", "r3"} {
		h.crr(n, "web", nil, "a")
		crrs = append(crrs, h.get(n))
	}
	got := make(chan string, len(crrs))
	for _, c := range crrs {
		go func() { got <- h.e.claimTurn(h.ctx, "uid-web", c, "") }()
	}
	free := 0
	for range crrs {
		if <-got == "" {
			free++
		}
	}
	if free != 1 {
		t.Fatalf("%d workers took the turn, want 1", free)
	}
}

// staleReads serves one stale copy of a request from Get, as a lagging cache would.
type staleReads struct {
	client.Client
	stale *appsv1alpha1.ContainerRecreateRequest
}

func (s *staleReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r, ok := obj.(*appsv1alpha1.ContainerRecreateRequest); ok && s.stale != nil && key == client.ObjectKeyFromObject(s.stale) {
		s.stale.DeepCopyInto(r)
		s.stale = nil
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

// Reconcile handles a conflict by planning again from a fresh read: here the stale copy predates
// the stop, and the fresh one shows the replacement running, so the request simply succeeds.
func TestReconcileRetriesFromAFreshRead(t *testing.T) {
	h := newHarness(t)
	h.pod("web", nil, "app")
	h.crr("r", "web", nil, "app")
	stale := h.get("r")
	h.reconcile("r")
	h.kubeletRestart("web", "app")
	h.e.Client = &staleReads{Client: h.c, stale: stale}
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "")
	if len(h.stops()) != 1 {
		t.Fatalf("stops = %v", h.stops())
	}
	if s := h.get("r").Status.ContainerRecreateStates[0]; !s.IsKilled {
		t.Fatalf("state = %+v", s)
	}
}

func TestPodEventsEnqueueActiveRequestsOfThePod(t *testing.T) {
	h := newHarness(t)
	p := h.pod("web", nil, "app")
	h.pod("other", nil, "app")
	h.crr("r1", "web", nil, "app")
	h.crr("r2", "other", nil, "app")
	// A finished request is labelled like an active one: its phase says it ended.
	h.crr("finished", "web", func(r *appsv1alpha1.ContainerRecreateRequest) {
		r.Status.Phase = appsv1alpha1.RecreateSucceeded
	}, "app")
	reqs := h.e.requestsForPod(h.ctx, p)
	if len(reqs) != 1 || reqs[0].Name != "r1" {
		t.Fatalf("requestsForPod(web) = %v, want r1 only", reqs)
	}
}

func TestMessagesAreCutToTheAPILimit(t *testing.T) {
	s := appsv1alpha1.ContainerRecreateRequestStatus{Message: strings.Repeat("x", 2000),
		ContainerRecreateStates: []appsv1alpha1.ContainerRecreateState{{Message: strings.Repeat("y", 1025)}, {Message: "short"}}}
	truncateMessages(&s)
	if len(s.Message) != appsv1alpha1.MaxMessageLength || !strings.HasSuffix(s.Message, "...") ||
		len(s.ContainerRecreateStates[0].Message) != appsv1alpha1.MaxMessageLength ||
		s.ContainerRecreateStates[1].Message != "short" {
		t.Fatalf("lengths %d %d %q", len(s.Message), len(s.ContainerRecreateStates[0].Message), s.ContainerRecreateStates[1].Message)
	}
}

// A long preStop hook (or grace period) of one request runs in the background: the workers go on
// with the node's other requests, and the request itself is picked up (its phase written) at once.
func TestLongStopDoesNotHoldUpOtherRequests(t *testing.T) {
	h := newHarness(t)
	h.pod("slow", withPreStop(corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 600}}), "app")
	h.pod("fast", nil, "app")
	h.crr("a", "slow", func(r *appsv1alpha1.ContainerRecreateRequest) {
		grace(900)(r)
		r.Spec.ActiveDeadlineSeconds = ptr.To(appsv1alpha1.ActiveDeadlineSecondsFor(900, 0)) // as the webhook defaults it
	}, "app")
	h.crr("b", "fast", nil, "app")

	returned := make(chan struct{})
	go func() {
		defer close(returned)
		// The executor's own step, without the harness waiting for the stop it starts.
		if _, err := h.e.Reconcile(h.ctx, reconcileRequest("a")); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the step of a request with a 600 s preStop hook held its worker")
	}
	if p := h.get("a").Status.Phase; p != appsv1alpha1.RecreateRecreating {
		t.Fatalf("request a is %q: picked up, its phase must say so at once", p)
	}
	h.reconcile("b")
	if s := h.stops(); len(s) != 1 || !strings.Contains(s[0], "uid-fast") {
		t.Fatalf("stops = %v: fast's container is stopped while slow's hook still runs", s)
	}
	for i := 0; !h.clock.HasWaiters(); i++ {
		if i > 10000 {
			t.Fatal("the sleep hook never waited on the clock")
		}
		time.Sleep(time.Millisecond)
	}
	h.clock.Step(600 * time.Second)
	if !h.waitStops(10 * time.Second) {
		t.Fatal("slow's stop did not return once its hook ended")
	}
	h.reconcile("a")
	if st := h.get("a").Status.ContainerRecreateStates; len(st) != 1 || !st[0].IsKilled {
		t.Fatalf("slow's state after its stop returned: %+v", st)
	}
}

// countConflicts counts the executor's status patches that the API refused with a Conflict.
func countConflicts(h *harness) *atomic.Int32 {
	return countStatusPatches(h, apierrors.IsConflict)
}

// countStatusPatches counts the executor's status patches whose outcome matches (nil error: a
// write the API accepted).
func countStatusPatches(h *harness, matches func(error) bool) *atomic.Int32 {
	var n atomic.Int32
	h.e.Client = interceptor.NewClient(h.c.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch,
			opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			if matches(err) {
				n.Add(1)
			}
			return err
		},
	})
	return &n
}
