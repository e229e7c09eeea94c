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
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

func TestMayStopFirst(t *testing.T) {
	pinned := func(name, id string) appsv1alpha1.ContainerRecreateRequestContainer {
		return appsv1alpha1.ContainerRecreateRequestContainer{Name: name,
			StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: id}}
	}
	recreating := func(name, id string) appsv1alpha1.ContainerRecreateState {
		return appsv1alpha1.ContainerRecreateState{Name: name, Phase: appsv1alpha1.RecreateRecreating, ContainerID: id}
	}
	cases := []struct {
		name       string
		containers []appsv1alpha1.ContainerRecreateRequestContainer
		force      bool
		age        time.Duration
		states     []appsv1alpha1.ContainerRecreateState
		kill       []string
		want       bool
	}{
		{"fresh, pinned", []appsv1alpha1.ContainerRecreateRequestContainer{pinned("app", "c://1")}, false, time.Second,
			[]appsv1alpha1.ContainerRecreateState{recreating("app", "c://1")}, []string{"app"}, true},
		{"just under the age limit", []appsv1alpha1.ContainerRecreateRequestContainer{pinned("app", "c://1")}, false,
			StopFirstMaxAge - time.Millisecond, []appsv1alpha1.ContainerRecreateState{recreating("app", "c://1")}, []string{"app"}, true},
		{"at the age limit", []appsv1alpha1.ContainerRecreateRequestContainer{pinned("app", "c://1")}, false,
			StopFirstMaxAge, []appsv1alpha1.ContainerRecreateState{recreating("app", "c://1")}, []string{"app"}, false},
		{"forceRecreate stops whatever runs", []appsv1alpha1.ContainerRecreateRequestContainer{pinned("app", "c://1")}, true,
			time.Second, []appsv1alpha1.ContainerRecreateState{recreating("app", "c://1")}, []string{"app"}, false},
		{"no statusContext", []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}}, false, time.Second,
			[]appsv1alpha1.ContainerRecreateState{recreating("app", "c://1")}, []string{"app"}, false},
		{"plan stops another instance than the pinned one", []appsv1alpha1.ContainerRecreateRequestContainer{pinned("app", "c://1")}, false,
			time.Second, []appsv1alpha1.ContainerRecreateState{recreating("app", "c://2")}, []string{"app"}, false},
		{"one of two unpinned", []appsv1alpha1.ContainerRecreateRequestContainer{pinned("a", "c://1"), {Name: "b"}}, false,
			time.Second, []appsv1alpha1.ContainerRecreateState{recreating("a", "c://1"), recreating("b", "c://2")}, []string{"a", "b"}, false},
		{"only the pinned one of two is stopped now", []appsv1alpha1.ContainerRecreateRequestContainer{pinned("a", "c://1"), {Name: "b"}}, false,
			time.Second, []appsv1alpha1.ContainerRecreateState{recreating("a", "c://1"), {Name: "b", Phase: appsv1alpha1.RecreatePending}},
			[]string{"a"}, true},
		{"nothing to stop", []appsv1alpha1.ContainerRecreateRequestContainer{pinned("app", "c://1")}, false, time.Second, nil, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Observation{FirstSeen: t0, Now: t0.Add(tc.age), Containers: tc.containers,
				Strategy: appsv1alpha1.ContainerRecreateRequestStrategy{ForceRecreate: tc.force}}
			if got := mayStopFirst(o, tc.states, tc.kill); got != tc.want {
				t.Fatalf("mayStopFirst = %v, want %v", got, tc.want)
			}
		})
	}
}

// statusAtStop records, at each CRI stop, the request's status as the API server holds it.
func statusAtStop(h **harness, name string, seen chan<- appsv1alpha1.ContainerRecreateRequestStatus) func(*critest.Server) {
	return func(s *critest.Server) {
		s.StopFunc = func(string, int64) error {
			r := &appsv1alpha1.ContainerRecreateRequest{}
			if err := (*h).c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: name}, r); err == nil {
				seen <- r.Status
			}
			return nil
		}
	}
}

// onStatusPatch runs before each status patch of a request; an error it returns fails the patch.
func onStatusPatch(c client.Client, before func() error) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch,
			opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*appsv1alpha1.ContainerRecreateRequest); ok {
				if err := before(); err != nil {
					return err
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

// A fresh request that names its instance: the stop does not wait for the status write (which
// here waits for the stop), and the write that follows records the same instance.
func TestFreshPinnedRequestStopsBeforeItsStatusWrite(t *testing.T) {
	stopCalled := make(chan struct{})
	h := newHarness(t, func(s *critest.Server) {
		s.StopFunc = func(string, int64) error { close(stopCalled); return nil }
	})
	h.pod("web", nil, "app")
	old := h.containerID("web", "app")
	h.crr("r", "web", nil, "app")
	// Each status write waits for the stop (at most a second): one that has to wait it out went
	// out before the stop.
	late := 0
	h.e.Client = onStatusPatch(h.c, func() error {
		select {
		case <-stopCalled:
		case <-time.After(time.Second):
			late++
		}
		return nil
	})
	h.reconcile("r")
	if late != 0 {
		t.Fatalf("%d status write(s) went out before the stop", late)
	}
	st := h.expectPhase("r", appsv1alpha1.RecreateRecreating, "").Status.ContainerRecreateStates
	if len(st) != 1 || st[0].ContainerID != old || !st[0].IsKilled || len(h.stops()) != 1 {
		t.Fatalf("states %+v, stops %v; want %s recorded as stopped, one stop", st, h.stops(), old)
	}
	h.kubeletRestart("web", "app")
	h.reconcile("r")
	h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "all 1 container(s) restarted")
}

// Where the spec does not pin the instance, or the request is no longer fresh, the status write
// that records the instance is acknowledged before the stop.
func TestStatusWriteGoesFirstUnlessPinnedAndFresh(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*appsv1alpha1.ContainerRecreateRequest)
		age    time.Duration
	}{
		{"forceRecreate", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Spec.Strategy.ForceRecreate = true }, 0},
		{"no statusContext", func(r *appsv1alpha1.ContainerRecreateRequest) { r.Spec.Containers[0].StatusContext = nil }, 0},
		{"older than StopFirstMaxAge", nil, StopFirstMaxAge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := make(chan appsv1alpha1.ContainerRecreateRequestStatus, 4)
			var h *harness
			h = newHarness(t, statusAtStop(&h, "r", seen))
			h.pod("web", nil, "app")
			old := h.containerID("web", "app")
			h.crr("r", "web", tc.mutate, "app")
			h.seenAgo("r", tc.age)
			h.reconcile("r")
			at := <-seen
			if len(at.ContainerRecreateStates) != 1 || at.ContainerRecreateStates[0].ContainerID != old ||
				at.ContainerRecreateStates[0].Phase != appsv1alpha1.RecreateRecreating {
				t.Fatalf("status at the stop = %+v; want %s recorded as Recreating", at, old)
			}
		})
	}
}

// The write after a stop that went first can fail. The container is stopped once, and the request
// records that it stopped it, even when the successor runs by the next step.
func TestStopFirstWhoseWriteFailed(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"conflict", apierrors.NewConflict(appsv1alpha1.GroupVersion.WithResource("containerrecreaterequests").GroupResource(), "r",
			errors.New("the object has been modified"))},
		{"API server unavailable", apierrors.NewServiceUnavailable("etcd leader changed")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.pod("web", nil, "app")
			old := h.containerID("web", "app")
			h.crr("r", "web", nil, "app")
			failures := 1
			h.e.Client = onStatusPatch(h.c, func() error {
				if failures > 0 {
					failures--
					return tc.err
				}
				return nil
			})
			_, err := h.e.Reconcile(h.ctx, reconcileRequest("r"))
			if apierrors.IsConflict(tc.err) != (err == nil) {
				t.Fatalf("Reconcile = %v", err) // a conflict is retried from a fresh read within the call
			}
			if !h.waitStops(5 * time.Second) {
				t.Fatal("the stop did not return")
			}
			h.kubeletRestart("web", "app") // before the next step
			h.reconcile("r")
			r := h.expectPhase("r", appsv1alpha1.RecreateSucceeded, "all 1 container(s) restarted")
			st := r.Status.ContainerRecreateStates[0]
			if len(h.stops()) != 1 || !st.IsKilled || st.ContainerID != old || !strings.HasPrefix(st.Message, "stopped "+old) {
				t.Fatalf("stops %v, state %+v; want one stop of %s recorded as isKilled", h.stops(), st, old)
			}
		})
	}
}
