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

package memory

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

func TestHolds(t *testing.T) {
	web := rules.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "Deployment", Name: "web"}
	db := rules.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "StatefulSet", Name: "db"}
	p1 := types.NamespacedName{Namespace: "shop", Name: "web-1"}
	p2 := types.NamespacedName{Namespace: "shop", Name: "web-2"}
	p3 := types.NamespacedName{Namespace: "shop", Name: "db-0"}
	app1 := rules.Instance{Container: "app", ContainerID: "containerd://a1"}
	side1 := rules.Instance{Container: "proxy", ContainerID: "containerd://s1"}
	storm := func(w rules.WorkloadKey, node string) hold {
		return hold{reason: policyv1alpha1.HoldFailureStorm, workload: w, node: node}
	}
	h := newHolds()
	heldFor := func(pod types.NamespacedName, i rules.Instance) policyv1alpha1.HoldReason {
		r, _ := h.held(pod, i)
		return r.Reason
	}
	if _, ok := h.held(p1, app1); ok {
		t.Fatal("nothing is held yet")
	}
	// Whether a hold is a transition (an event and a count) is the decision's
	// (rules.Decision.NewHold, from what held returns).
	h.record(p1, app1, storm(web, "n1"))
	if r := heldFor(p1, app1); r != policyv1alpha1.HoldFailureStorm {
		t.Fatalf("held for %q", r)
	}
	h.record(p1, app1, storm(web, "n1"))
	h.record(p1, app1, hold{reason: policyv1alpha1.HoldMaxUnavailable, workload: web, node: "n1"})
	if r := heldFor(p1, app1); r != policyv1alpha1.HoldMaxUnavailable {
		t.Fatalf("a new reason replaces the old one: held for %q", r)
	}
	h.record(p1, side1, storm(web, "n1"))
	h.record(p2, app1, storm(web, "n2"))
	h.record(p3, app1, hold{reason: policyv1alpha1.HoldRateLimited, workload: db, node: "n2"})

	sorted := func(pods []types.NamespacedName) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	check := func(what string, got []types.NamespacedName, want ...string) {
		t.Helper()
		if g := sorted(got); !slices.Equal(g, want) {
			t.Errorf("%s = %v, want %v", what, g, want)
		}
	}
	check("inWorkload(web)", h.inWorkload(web), "web-1", "web-2")
	check("inWorkload(db)", h.inWorkload(db), "db-0")
	check("OnNode(n2)", h.onNode("n2"), "db-0", "web-2")
	check("InNamespace(shop)", h.inNamespace("shop"), "db-0", "web-1", "web-2")
	check("InNamespace(other)", h.inNamespace("other"))
	if r := h.reasons(); r[web] != policyv1alpha1.HoldFailureStorm || r[db] != policyv1alpha1.HoldRateLimited {
		t.Errorf("reasons = %v: the first reason in decision order wins", r)
	}
	if f := h.heldFor(policyv1alpha1.HoldFailureStorm); f[web] != 2 || f[db] != 0 {
		t.Errorf("heldFor(FailureStorm) = %v, want web's 2 pods", f)
	}

	// web-1's app instance is restarted; its sidecar is still held.
	h.release(p1, app1)
	check("InWorkload(web) after a release", h.inWorkload(web), "web-1", "web-2")
	// Only the sidecar's failure remains, then it clears.
	h.retain(p1, func(i rules.Instance) bool { return i == side1 })
	check("OnNode(n1) while the sidecar is held", h.onNode("n1"), "web-1")
	h.retain(p1, func(rules.Instance) bool { return false })
	check("OnNode(n1) once nothing is held", h.onNode("n1"))
	h.forget(p2)
	h.forget(p3)
	check("InNamespace(shop) after forgetting every pod", h.inNamespace("shop"))
	if len(h.byPod)+len(h.byWorkload)+len(h.byNode)+len(h.byNamespace) != 0 {
		t.Fatalf("index not empty: %+v", h)
	}
}
