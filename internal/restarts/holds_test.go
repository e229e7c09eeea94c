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

package restarts

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

func TestHolds(t *testing.T) {
	web := protection.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "Deployment", Name: "web"}
	db := protection.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "StatefulSet", Name: "db"}
	p1 := types.NamespacedName{Namespace: "shop", Name: "web-1"}
	p2 := types.NamespacedName{Namespace: "shop", Name: "web-2"}
	p3 := types.NamespacedName{Namespace: "shop", Name: "db-0"}
	app1 := Instance{"app", "containerd://a1"}
	side1 := Instance{"proxy", "containerd://s1"}
	storm := func(w protection.WorkloadKey, node string) Hold {
		return Hold{Reason: protection.ReasonFailureStorm, Workload: w, Node: node}
	}

	h := NewHolds()
	if !h.Record(p1, app1, storm(web, "n1")) {
		t.Fatal("a new instance is a transition")
	}
	if h.Record(p1, app1, storm(web, "n1")) {
		t.Fatal("the same reason again is no transition")
	}
	if !h.Record(p1, app1, Hold{Reason: protection.ReasonMaxUnavailable, Workload: web, Node: "n1"}) {
		t.Fatal("a new reason is a transition")
	}
	h.Record(p1, side1, storm(web, "n1"))
	h.Record(p2, app1, storm(web, "n2"))
	h.Record(p3, app1, Hold{Reason: protection.ReasonRateLimited, Workload: db, Node: "n2"})

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
	check("InWorkload(web)", h.InWorkload(web), "web-1", "web-2")
	check("InWorkload(db)", h.InWorkload(db), "db-0")
	check("OnNode(n2)", h.OnNode("n2"), "db-0", "web-2")
	check("InNamespace(shop)", h.InNamespace("shop"), "db-0", "web-1", "web-2")
	check("InNamespace(other)", h.InNamespace("other"))
	if r := h.Reasons(); r[web] != protection.ReasonFailureStorm || r[db] != protection.ReasonRateLimited {
		t.Errorf("Reasons = %v: the first reason in decision order wins", r)
	}
	if f := h.HeldFor(protection.ReasonFailureStorm); f[web] != 2 || f[db] != 0 {
		t.Errorf("HeldFor(FailureStorm) = %v, want web's 2 pods", f)
	}

	// web-1's app instance is restarted; its sidecar is still held.
	h.Release(p1, app1)
	check("InWorkload(web) after a release", h.InWorkload(web), "web-1", "web-2")
	// Only the sidecar's failure remains, then it clears.
	h.Retain(p1, func(i Instance) bool { return i == side1 })
	check("OnNode(n1) while the sidecar is held", h.OnNode("n1"), "web-1")
	h.Retain(p1, func(Instance) bool { return false })
	check("OnNode(n1) once nothing is held", h.OnNode("n1"))
	h.Forget(p2)
	h.Forget(p3)
	check("InNamespace(shop) after forgetting every pod", h.InNamespace("shop"))
	if len(h.byPod)+len(h.byWorkload)+len(h.byNode)+len(h.byNamespace) != 0 {
		t.Fatalf("index not empty: %+v", h)
	}
}
