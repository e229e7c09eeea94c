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

	prom "github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

// A pod's status is written by whoever may write pods/status: a request must never stop (nor run
// the preStop hook of) a container that is not the pod's, whatever its status names.
func TestStopRefusesAContainerThatIsNotThePods(t *testing.T) {
	for _, tc := range []struct {
		name, cause string
		target      func(h *harness) string
	}{
		{"another pod's container", cri.CausePodUID, func(h *harness) string {
			h.pod("victim", nil, "app")
			return h.containerID("victim", "app")
		}},
		{"another container of the pod", cri.CauseContainerName, func(h *harness) string {
			return h.containerID("web", "side")
		}},
		{"a container the kubelet did not create", cri.CauseUnlabelled, func(h *harness) string {
			id := h.srv.AddContainer("uid-web", "app")
			h.srv.SetOwner(id, "", "")
			return "critest://" + id
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.pod("web", func(p *corev1.Pod) {
				p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
					Exec: &corev1.ExecAction{Command: []string{"/bin/cleanup"}}}}
			}, "app", "side")
			foreign := tc.target(h)
			web := &corev1.Pod{}
			if err := h.c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "web"}, web); err != nil {
				t.Fatal(err)
			}
			for i := range web.Status.ContainerStatuses {
				if web.Status.ContainerStatuses[i].Name == "app" {
					web.Status.ContainerStatuses[i].ContainerID = foreign
				}
			}
			if err := h.c.Status().Update(context.Background(), web); err != nil {
				t.Fatal(err)
			}
			before := prom.ToFloat64(cri.OwnerRefusals.WithLabelValues(cri.OpStop, tc.cause))
			h.crr("r1", "web", nil, "app")

			h.reconcile("r1")
			if got := h.stops(); len(got) != 0 {
				t.Fatalf("stops = %v, want none", got)
			}
			if got := h.srv.Calls("ExecSync"); len(got) != 0 {
				t.Fatalf("the preStop hook ran in %s", got[0].ContainerID)
			}
			h.expectPhase("r1", appsv1alpha1.RecreateFailed, "not stopped: container "+cri.TrimContainerID(foreign))
			if ev := h.events(); !hasEventPrefix(ev, "Warning "+cri.ReasonForeignContainer+" Did not stop container app: ") {
				t.Fatalf("events = %v", ev)
			}
			if d := prom.ToFloat64(cri.OwnerRefusals.WithLabelValues(cri.OpStop, tc.cause)) - before; d != 1 {
				t.Fatalf("refusals{stop,%s} grew by %v", tc.cause, d)
			}
		})
	}
}

// The runtime resolves a unique prefix of a container ID as the whole ID. A prefix of the pod's
// own container would pass the owner check, and by the stop (after the preStop hook, which may
// take the whole grace period) name whatever container took that prefix meanwhile: here, once the
// hook ran, the pod's container is gone and another pod's begins with the same prefix. The stop
// refuses the prefix before the hook: nothing runs, nothing is stopped, the request fails.
func TestStopRefusesAPrefixOfAContainerID(t *testing.T) {
	const victim = "uid-web-app-00victim"
	var srv *critest.Server
	h := newHarness(t, func(s *critest.Server) {
		srv = s
		s.ExecFunc = func(*runtimeapi.ExecSyncRequest) critest.ExecResult {
			// The hook ran in the pod's container; the kubelet removes it, and another pod's
			// container comes whose ID begins as the prefix.
			s.Remove("uid-web-app-0001")
			s.AddContainerWithID(victim, "uid-victim", "app")
			return critest.ExecResult{}
		}
	})
	h.pod("web", func(p *corev1.Pod) {
		p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
			Exec: &corev1.ExecAction{Command: []string{"/bin/cleanup"}}}}
	}, "app")
	if id := h.containerID("web", "app"); id != "critest://uid-web-app-0001" {
		t.Fatalf("the pod's container is %s", id)
	}
	web := &corev1.Pod{}
	if err := h.c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	web.Status.ContainerStatuses[0].ContainerID = "critest://uid-web-app-00"
	if err := h.c.Status().Update(context.Background(), web); err != nil {
		t.Fatal(err)
	}
	before := prom.ToFloat64(cri.OwnerRefusals.WithLabelValues(cri.OpStop, cri.CauseContainerID))
	h.crr("r1", "web", nil, "app")

	h.reconcile("r1")
	for _, c := range srv.Calls("StopContainer") {
		if c.Resolved == victim {
			t.Fatalf("stopped the other pod's container %s (asked for %s)", c.Resolved, c.ContainerID)
		}
	}
	if got := h.stops(); len(got) != 0 {
		t.Fatalf("stops = %v, want none", got)
	}
	if got := srv.Calls("ExecSync"); len(got) != 0 {
		t.Fatalf("the preStop hook ran by the prefix %s in %s", got[0].ContainerID, got[0].Resolved)
	}
	h.expectPhase("r1", appsv1alpha1.RecreateFailed, "not stopped: container uid-web-app-00 is not a whole container ID")
	if ev := h.events(); !hasEventPrefix(ev, "Warning "+cri.ReasonForeignContainer+" Did not stop container app: ") {
		t.Fatalf("events = %v", ev)
	}
	if d := prom.ToFloat64(cri.OwnerRefusals.WithLabelValues(cri.OpStop, cri.CauseContainerID)) - before; d != 1 {
		t.Fatalf("refusals{stop,container-id} grew by %v", d)
	}
}

func hasEventPrefix(evs []string, prefix string) bool {
	for _, e := range evs {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}
