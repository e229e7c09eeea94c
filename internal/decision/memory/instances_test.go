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
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// The one per-instance store: first sightings, holds and waits of each (pod, container
// instance), one retain, one set of indexes. Each step changes the store; the indexes must then
// name exactly the pods listed.
func TestInstances(t *testing.T) {
	web := rules.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "Deployment", Name: "web"}
	db := rules.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "StatefulSet", Name: "db"}
	web1 := types.NamespacedName{Namespace: "shop", Name: "web-1"}
	web2 := types.NamespacedName{Namespace: "shop", Name: "web-2"}
	db0 := types.NamespacedName{Namespace: "shop", Name: "db-0"}
	app := rules.Instance{Container: "app", ContainerID: "containerd://a1"}
	side := rules.Instance{Container: "proxy", ContainerID: "containerd://s1"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	held := func(r policyv1alpha1.HoldReason, w rules.WorkloadKey, node string) func(*instance) {
		return func(x *instance) {
			if x.firstSeen.IsZero() {
				x.firstSeen = t0
			}
			x.hold, x.waiting, x.workload, x.node = &hold{reason: r, since: t0}, false, w, node
		}
	}
	waits := func(w rules.WorkloadKey, node string) func(*instance) {
		return func(x *instance) { x.waiting, x.workload, x.node = true, w, node }
	}
	released := func(x *instance) { x.hold, x.waiting = nil, false }
	seen := func(x *instance) { x.firstSeen = t0 }

	type want struct {
		// inWorkload: web's held or waiting pods; onNode: n1's and n2's held pods; inNamespace:
		// shop's held pods.
		inWeb, inDB, onN1, onN2, inShop []string
		// reasons: each workload's first hold reason in decision order; storm: pods held for a
		// storm per workload.
		reasons    map[rules.WorkloadKey]policyv1alpha1.HoldReason
		stormWeb   int
		appHeldFor policyv1alpha1.HoldReason
	}
	s := newInstances()
	for _, step := range []struct {
		name string
		do   func()
		want want
	}{
		{"empty", func() {}, want{}},
		{"a first sighting alone wakes nothing", func() { s.update(web1, app, seen) },
			want{}},
		{"web-1's app held for a storm", func() { s.update(web1, app, held(policyv1alpha1.HoldFailureStorm, web, "n1")) },
			want{inWeb: []string{"web-1"}, onN1: []string{"web-1"}, inShop: []string{"web-1"}, stormWeb: 1,
				reasons: map[rules.WorkloadKey]policyv1alpha1.HoldReason{web: policyv1alpha1.HoldFailureStorm}, appHeldFor: policyv1alpha1.HoldFailureStorm}},
		{"a new reason replaces the old one", func() { s.update(web1, app, held(policyv1alpha1.HoldMaxUnavailable, web, "n1")) },
			want{inWeb: []string{"web-1"}, onN1: []string{"web-1"}, inShop: []string{"web-1"},
				reasons: map[rules.WorkloadKey]policyv1alpha1.HoldReason{web: policyv1alpha1.HoldMaxUnavailable}, appHeldFor: policyv1alpha1.HoldMaxUnavailable}},
		{"its sidecar, web-2 and db-0 held", func() {
			s.update(web1, side, held(policyv1alpha1.HoldFailureStorm, web, "n1"))
			s.update(web2, app, held(policyv1alpha1.HoldFailureStorm, web, "n2"))
			s.update(db0, app, held(policyv1alpha1.HoldRateLimited, db, "n2"))
		}, want{inWeb: []string{"web-1", "web-2"}, inDB: []string{"db-0"}, onN1: []string{"web-1"}, onN2: []string{"db-0", "web-2"},
			inShop: []string{"db-0", "web-1", "web-2"}, stormWeb: 2, appHeldFor: policyv1alpha1.HoldMaxUnavailable,
			reasons: map[rules.WorkloadKey]policyv1alpha1.HoldReason{web: policyv1alpha1.HoldFailureStorm, db: policyv1alpha1.HoldRateLimited}}},
		{"web-2 waits instead: woken with its workload only", func() {
			s.update(web2, app, func(x *instance) { released(x); waits(web, "n2")(x) })
		}, want{inWeb: []string{"web-1", "web-2"}, inDB: []string{"db-0"}, onN1: []string{"web-1"}, onN2: []string{"db-0"},
			inShop: []string{"db-0", "web-1"}, stormWeb: 1, appHeldFor: policyv1alpha1.HoldMaxUnavailable,
			reasons: map[rules.WorkloadKey]policyv1alpha1.HoldReason{web: policyv1alpha1.HoldFailureStorm, db: policyv1alpha1.HoldRateLimited}}},
		{"web-1's app restarted, its sidecar still held", func() { s.update(web1, app, released) },
			want{inWeb: []string{"web-1", "web-2"}, inDB: []string{"db-0"}, onN1: []string{"web-1"}, onN2: []string{"db-0"},
				inShop: []string{"db-0", "web-1"}, stormWeb: 1,
				reasons: map[rules.WorkloadKey]policyv1alpha1.HoldReason{web: policyv1alpha1.HoldFailureStorm, db: policyv1alpha1.HoldRateLimited}}},
		{"web-1's sidecar clears: retain keeps the app's first sighting only", func() {
			s.retain(web1, func(i rules.Instance) bool { return i == app })
		}, want{inWeb: []string{"web-2"}, inDB: []string{"db-0"}, onN2: []string{"db-0"}, inShop: []string{"db-0"},
			reasons: map[rules.WorkloadKey]policyv1alpha1.HoldReason{db: policyv1alpha1.HoldRateLimited}}},
		{"every pod gone", func() { s.forget(web1); s.forget(web2); s.forget(db0) }, want{}},
	} {
		step.do()
		check := func(what string, got []types.NamespacedName, want []string) {
			t.Helper()
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Errorf("%s: %s = %v, want %v", step.name, what, names, want)
			}
		}
		check("inWorkload(web)", s.inWorkload(web), step.want.inWeb)
		check("inWorkload(db)", s.inWorkload(db), step.want.inDB)
		check("heldOnNode(n1)", s.heldOnNode("n1"), step.want.onN1)
		check("heldOnNode(n2)", s.heldOnNode("n2"), step.want.onN2)
		check("heldInNamespace(shop)", s.heldInNamespace("shop"), step.want.inShop)
		if r := s.reasons(); len(r) != len(step.want.reasons) || r[web] != step.want.reasons[web] || r[db] != step.want.reasons[db] {
			t.Errorf("%s: reasons = %v, want %v", step.name, r, step.want.reasons)
		}
		if n := s.heldFor(policyv1alpha1.HoldFailureStorm)[web]; n != step.want.stormWeb {
			t.Errorf("%s: pods of web held for a storm = %d, want %d", step.name, n, step.want.stormWeb)
		}
		if r, _ := s.held(web1, app); r.Reason != step.want.appHeldFor {
			t.Errorf("%s: web-1's app held for %q, want %q", step.name, r.Reason, step.want.appHeldFor)
		}
	}
	if len(s.byPod)+len(s.byWorkload)+len(s.byNode)+len(s.byNamespace) != 0 {
		t.Fatalf("the store is not empty once every pod is gone: %+v", s)
	}
}

// A first sighting is kept through holds, waits and releases of the instance, and goes with it.
func TestFirstSightingLastsAsLongAsTheInstance(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := New(clk, rules.Rate{}, nil)
	f, x := facts(0)
	inst := x.Instance()
	for _, c := range []struct {
		name   string
		after  time.Duration
		mutate func(*rules.Facts)
		want   rules.Outcome
	}{
		{"held", 0, func(f *rules.Facts) { f.Shadow = true }, rules.Hold},
		{"waits", time.Minute, func(f *rules.Facts) { f.Self.ActiveCRR = true }, rules.Wait},
		{"restarted", 2 * time.Minute, func(*rules.Facts) {}, rules.Restart},
	} {
		clk.SetTime(t0.Add(c.after))
		ff, xx := facts(0)
		c.mutate(ff)
		if d := m.Decide(ff, xx); d.Outcome != c.want {
			t.Fatalf("%s: decided %s (%s)", c.name, d.Outcome, d.Message)
		}
		if at, ok := m.instances.firstSeenOf(f.Pod, inst); !ok || !at.Equal(t0) {
			t.Fatalf("%s: first seen %s %v, want %s", c.name, at, ok, t0)
		}
	}
	m.Retain(f.Pod, nil)
	if _, ok := m.instances.firstSeenOf(f.Pod, inst); ok || len(m.instances.byPod) != 0 {
		t.Fatal("an instance no longer failing is remembered")
	}
}
