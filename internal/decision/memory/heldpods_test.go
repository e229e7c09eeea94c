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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// A lasting hold is told again every 5 minutes, listed with since when, and measured.
func TestLoudHolds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := New(clk, rules.Rate{}, nil)
	dryRun := func() (*rules.Facts, rules.Failure) {
		f, x := facts(0)
		f.Policies[0].DryRun, f.Policies[0].MaxHold = true, time.Minute
		return f, x
	}
	budget := func() (*rules.Facts, rules.Failure) {
		f, x := facts(1)
		f.Policies[0].MaxUnavailable, f.Policies[0].MaxHold = intstr.FromInt32(0), time.Minute
		return f, x
	}
	for _, step := range []struct {
		after    time.Duration
		announce bool
	}{{0, true}, {4 * time.Minute, false}, {5 * time.Minute, true}, {9 * time.Minute, false}, {10 * time.Minute, true}} {
		clk.SetTime(t0.Add(step.after))
		d := m.Decide(dryRun())
		if d.Reason != policyv1alpha1.HoldDryRun || d.Announce != step.announce || !d.HeldSince.Equal(t0) {
			t.Fatalf("after %s: %s, announce %v since %s; want announce %v since %s", step.after, d.Reason, d.Announce, d.HeldSince, step.announce, t0)
		}
	}
	clk.SetTime(t0.Add(10*time.Minute + 30*time.Second))
	if d := m.Decide(budget()); d.Reason != policyv1alpha1.HoldMaxUnavailable || !d.Announce {
		t.Fatalf("budget: %s announce %v", d.Reason, d.Announce)
	}

	held := m.Snapshot(policyKey).HeldPods
	if len(held) != 2 || held[0].Pod.Name != "web-0" || !held[0].Since.Equal(t0) || held[0].Reason != policyv1alpha1.HoldDryRun ||
		held[1].Pod.Name != "web-1" || held[1].Container != "app" || held[1].Reason != policyv1alpha1.HoldMaxUnavailable {
		t.Fatalf("held pods, oldest first: %+v", held)
	}
	if other := m.Snapshot(rules.PolicyKey{Namespace: "ns", Name: "other"}).HeldPods; len(other) != 0 {
		t.Fatalf("another policy lists %+v", other)
	}

	s := m.HoldStats()
	if s.Pods[policyv1alpha1.HoldDryRun] != 1 || s.Pods[policyv1alpha1.HoldMaxUnavailable] != 1 ||
		s.Oldest[policyv1alpha1.HoldDryRun] != 10*time.Minute+30*time.Second || s.Oldest[policyv1alpha1.HoldMaxUnavailable] != 0 {
		t.Fatalf("stats %+v", s)
	}
	if s.OverMaxHold != 0 {
		t.Fatalf("a DryRun hold is never over maxHold: %+v", s)
	}
	clk.SetTime(t0.Add(11*time.Minute + 31*time.Second))
	if s := m.HoldStats(); s.OverMaxHold != 1 {
		t.Fatalf("a budget hold past maxHold: %+v", s)
	}
}
