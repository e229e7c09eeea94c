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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// The request's creationTimestamp is the API server's clock; the node's may be minutes off. The
// daemon judges the request's deadline on its own clock, from when it first saw it: a node ahead
// still restarts, a node behind stops acting at the request's active deadline after it saw it.
func TestDeadlineIsJudgedOnTheNodesClock(t *testing.T) {
	for _, tc := range []struct {
		name string
		skew time.Duration // the node's clock minus the API server's
	}{
		{"node 10 minutes ahead", 10 * time.Minute},
		{"node 10 minutes behind", -10 * time.Minute},
		{"same clocks", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.pod("web", nil, "app")
			h.crr("r", "web", func(r *appsv1alpha1.ContainerRecreateRequest) {
				r.CreationTimestamp = metav1.NewTime(h.clock.Now().Add(-tc.skew))
				r.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
			}, "app")
			if res := h.reconcile("r"); res.RequeueAfter != 10*time.Second {
				t.Fatalf("RequeueAfter = %v, want the poll interval", res.RequeueAfter)
			}
			if got := h.stops(); len(got) != 1 {
				t.Fatalf("stops = %v, want the container stopped", got)
			}
			h.expectPhase("r", appsv1alpha1.RecreateRecreating, "container app: stopped")

			// 60 s after the daemon first saw it, it stops acting on the request, whatever the
			// request's creationTimestamp says.
			h.clock.Step(55 * time.Second)
			if res := h.reconcile("r"); res.RequeueAfter != 5*time.Second {
				t.Fatalf("RequeueAfter = %v, want the 5 s left to the deadline", res.RequeueAfter)
			}
			h.clock.Step(5 * time.Second)
			before := h.get("r").ResourceVersion
			if res := h.reconcile("r"); res.RequeueAfter != 0 || h.get("r").ResourceVersion != before {
				t.Fatalf("RequeueAfter = %v, status written: %v; want the request left to the manager",
					res.RequeueAfter, h.get("r").ResourceVersion != before)
			}
		})
	}
}
