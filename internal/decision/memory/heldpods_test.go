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

	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// A lasting hold is told again every 5 minutes, listed with since when, and measured.
func TestLoudHolds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := New(clk, rules.Rate{}, nil)
	shadow := func() (*rules.Facts, rules.Failure) {
		f, x := facts(0)
		f.Shadow, f.Policies[0].MaxHold = true, time.Minute
		return f, x
	}
	budget := func() (*rules.Facts, rules.Failure) {
		f, x := facts(1)
		f.Policies[0].MaxUnavailable, f.Policies[0].MaxHold = ptr.To(intstr.FromInt32(0)), time.Minute
		return f, x
	}
	for _, step := range []struct {
		after    time.Duration
		announce bool
	}{{0, true}, {4 * time.Minute, false}, {5 * time.Minute, true}, {9 * time.Minute, false}, {10 * time.Minute, true}} {
		clk.SetTime(t0.Add(step.after))
		d := m.Decide(shadow())
		if d.Reason != policyv1alpha1.HoldShadow || d.Announce != step.announce || !d.HeldSince.Equal(t0) {
			t.Fatalf("after %s: %s, announce %v since %s; want announce %v since %s", step.after, d.Reason, d.Announce, d.HeldSince, step.announce, t0)
		}
	}
	clk.SetTime(t0.Add(10*time.Minute + 30*time.Second))
	if d := m.Decide(budget()); d.Reason != policyv1alpha1.HoldMaxUnavailable || !d.Announce {
		t.Fatalf("budget: %s announce %v", d.Reason, d.Announce)
	}

	held := m.Snapshot(policyKey).HeldPods
	if len(held) != 2 || held[0].Pod.Name != "web-0" || !held[0].Since.Equal(t0) || held[0].Reason != policyv1alpha1.HoldShadow ||
		held[1].Pod.Name != "web-1" || held[1].Container != "app" || held[1].Reason != policyv1alpha1.HoldMaxUnavailable {
		t.Fatalf("held pods, oldest first: %+v", held)
	}
	if other := m.Snapshot(rules.PolicyKey{Namespace: "ns", Name: "other"}).HeldPods; len(other) != 0 {
		t.Fatalf("another policy lists %+v", other)
	}

	s := m.HoldStats()
	if s.Pods[policyv1alpha1.HoldShadow] != 1 || s.Pods[policyv1alpha1.HoldMaxUnavailable] != 1 ||
		s.Oldest[policyv1alpha1.HoldShadow] != 10*time.Minute+30*time.Second || s.Oldest[policyv1alpha1.HoldMaxUnavailable] != 0 {
		t.Fatalf("stats %+v", s)
	}
	if s.OverMaxHold != 0 {
		t.Fatalf("a Shadow hold is never over maxHold: %+v", s)
	}
	clk.SetTime(t0.Add(11*time.Minute + 31*time.Second))
	if s := m.HoldStats(); s.OverMaxHold != 1 {
		t.Fatalf("a budget hold past maxHold: %+v", s)
	}
}

// The node condition reads the restarts held for a reason, with their workloads, and a canary in
// flight of a hold of that reason as still held: it is the storm's test, not its end.
func TestHeldFor(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := New(clk, rules.Rate{}, nil)
	stormOn := func(i int) (*rules.Facts, rules.Failure) {
		f, x := facts(i)
		f.Policies[0].MaxHold = time.Minute
		f.Node = rules.NodeState{Name: "a", Pods: 10, FailingPods: 6, FailingWorkloads: 3}
		return f, x
	}
	decide := func(i int) rules.Decision {
		d := m.Decide(stormOn(i))
		if d.Outcome == rules.Restart {
			d.Outcome = rules.Requested
			m.Apply(d)
		}
		return d
	}
	for i := range 3 {
		clk.SetTime(t0.Add(time.Duration(i) * time.Second))
		if d := decide(i); d.Reason != policyv1alpha1.HoldNodeStorm {
			t.Fatalf("web-%d: %s %s", i, d.Outcome, d.Reason)
		}
	}
	f, x := facts(3)
	f.Shadow = true
	if d := m.Decide(f, x); d.Reason != policyv1alpha1.HoldShadow {
		t.Fatalf("web-3: %s", d.Reason)
	}
	held := m.HeldFor(policyv1alpha1.HoldNodeStorm)
	web := rules.WorkloadKey{Namespace: "ns", Group: "apps", Kind: "Deployment", Name: "web"}
	if len(held) != 3 || held[0].Pod.Name != "web-0" || !held[0].Since.Equal(t0) || held[0].Workload != web ||
		held[0].Container != "app" || held[2].Pod.Name != "web-2" {
		t.Fatalf("NodeStorm holds, oldest first, with their workload: %+v", held)
	}

	clk.SetTime(t0.Add(rules.FirstCanaryWait + 2*time.Second))
	var canary rules.Decision
	for i := range 3 {
		if d := decide(i); d.Canary {
			canary = d
		}
	}
	if !canary.Canary {
		t.Fatal("no canary after the first wait")
	}
	m.Retain(canary.Pod, nil) // the restarted instance is gone
	held = m.HeldFor(policyv1alpha1.HoldNodeStorm)
	if len(held) != 3 || !slices.ContainsFunc(held, func(h HeldPod) bool {
		return h.Pod == canary.Pod && h.Container == "app" && h.Workload == web && h.Since.Equal(t0)
	}) {
		t.Fatalf("the canary in flight is still held, since the hold's onset: %+v", held)
	}
}
