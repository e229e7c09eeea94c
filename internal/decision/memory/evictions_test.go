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
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// An eviction is remembered as a restart is: it spends a token and the pod counts as unavailable
// until it is gone; a refused one gives the token back and holds the pod, saying why, for the
// breaker's window; a pod gone is forgotten.
func TestEvictionSpendsATokenAndIsTriedOncePerWindow(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{PerMinute: 60, Burst: 10}, nil)
	lemon := func() (*rules.Facts, rules.Failure) {
		f, x := facts(0)
		f.Policies[0].Breaker.Evict = true
		f.Elsewhere = map[string]int{"app": 3}
		return f, x
	}
	f, x := lemon()
	for i, at := range []time.Duration{-3 * time.Minute, -2 * time.Minute} {
		m.restarts.requested(f.Workload.Ref.Key("ns"), f.UID, "app", "old-"+string(rune('a'+i)), time.Time{}, time.Minute, clk.Now().Add(at))
		m.restarts.byWorkload[f.Workload.Ref.Key("ns")][i].Ineffective = true
	}
	d := m.Decide(f, x)
	if d.Outcome != rules.Evict {
		t.Fatalf("decided %s %s (%s), want Evict", d.Outcome, d.Reason, d.Message)
	}
	if got := m.buckets.tokens(policyKey, clk.Now()); got != 2 {
		t.Fatalf("the policy's bucket has %v tokens after the eviction, want 2", got)
	}
	if _, ok := m.expected.expected(f.UID); !ok {
		t.Fatal("the evicted pod does not count as unavailable")
	}
	d.Outcome, d.Message = rules.EvictionRefused, "the disruption budget web needs 10 healthy pods"
	m.Apply(d)
	if got := m.buckets.tokens(policyKey, clk.Now()); got != 3 {
		t.Fatalf("the refused eviction's token was not given back: %v", got)
	}
	if _, ok := m.expected.expected(f.UID); ok {
		t.Fatal("the pod whose eviction was refused still counts as being evicted")
	}
	clk.SetTime(clk.Now().Add(time.Minute))
	d = m.Decide(lemon())
	if d.Outcome != rules.Hold || d.Reason != policyv1alpha1.HoldRestartIneffective || !strings.Contains(d.Message, "needs 10 healthy pods") {
		t.Fatalf("after a refusal: %s %s (%s), want held RestartIneffective naming the refusal", d.Outcome, d.Reason, d.Message)
	}
	// An eviction not tried (the failure not confirmed) is no attempt: the next decision evicts.
	clk.SetTime(clk.Now().Add(10 * time.Minute))
	for i := range m.restarts.byWorkload[f.Workload.Ref.Key("ns")] {
		m.restarts.byWorkload[f.Workload.Ref.Key("ns")][i].At = clk.Now().Add(-time.Minute)
	}
	if d = m.Decide(lemon()); d.Outcome != rules.Evict {
		t.Fatalf("a window after the refusal: %s %s (%s), want Evict", d.Outcome, d.Reason, d.Message)
	}
	d.Outcome = rules.EvictionWithdrawn
	m.Apply(d)
	if e := m.evictions[f.UID]; !e.Withdrawn {
		t.Fatalf("an eviction not tried is not known withdrawn: %+v", e)
	}
	if d = m.Decide(lemon()); d.Outcome != rules.Evict {
		t.Fatalf("after an eviction not tried: %s %s (%s), want Evict", d.Outcome, d.Reason, d.Message)
	}
	m.ForgetPod(f.Pod, f.UID)
	if _, ok := m.evictions[f.UID]; ok {
		t.Fatal("the eviction of a pod that is gone is still remembered")
	}
}

// An eviction takes the key's canary place as a canary restart does: while the evicted pod is on
// its way out no other pod of the key is released; once it is gone the next canary may go; a
// refused eviction gives the place back at once.
func TestEvictionIsTheKeysCanary(t *testing.T) {
	for _, answer := range []rules.Outcome{rules.Evicted, rules.EvictionRefused} {
		t.Run(string(answer), func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			m := New(clk, rules.Rate{}, nil)
			gone := false
			// Pods 0–5 of 10 fail in a storm (stormFacts); pod 0's own restarts did not help, and its
			// container passes on other nodes: it is evicted once released past the storm.
			storm := func(i int) (*rules.Facts, rules.Failure) {
				f, x := stormFacts(i)
				f.Policies[0].Breaker.Evict = true
				f.Elsewhere = map[string]int{"app": 4}
				if gone {
					// Its replacement fails too: the storm goes on.
					f.Workload.Pods[0] = rules.PodState{UID: "uid-0-new", Failing: true}
				}
				return f, x
			}
			f, _ := storm(0)
			for i, at := range []time.Duration{-3 * time.Minute, -2 * time.Minute} {
				m.restarts.requested(f.Workload.Ref.Key("ns"), f.UID, "app", "old-"+string(rune('a'+i)), time.Time{}, time.Minute, clk.Now().Add(at))
				m.restarts.byWorkload[f.Workload.Ref.Key("ns")][i].Ineffective = true
			}
			for i := range 6 {
				if d := m.Decide(storm(i)); d.Outcome != rules.Hold {
					t.Fatalf("the storm begins: web-%d %s (%s)", i, d.Outcome, d.Message)
				}
			}
			clk.SetTime(clk.Now().Add(time.Minute)) // the first wait (maxHold 1m)
			d := m.Decide(storm(0))
			if d.Outcome != rules.Evict || !d.Canary {
				t.Fatalf("web-0 released past the storm: %s canary %v (%s), want an eviction as the canary", d.Outcome, d.Canary, d.Message)
			}
			if h, _ := m.holds.of(webApp); h.Canary == nil || !h.Canary.Evicted || h.Canary.Pod != f.UID || h.Canaries != 1 {
				t.Fatalf("the eviction is not the hold's canary: %+v", h)
			}
			for i := 1; i < 6; i++ {
				if d := m.Decide(storm(i)); d.Outcome != rules.Hold || !strings.Contains(d.Message, "pod web-0 was evicted as canary 1") {
					t.Fatalf("while the evicted canary is in flight: web-%d %s (%s), want held", i, d.Outcome, d.Message)
				}
			}
			d.Outcome = answer
			m.Apply(d)
			if answer == rules.Evicted {
				if d := m.Decide(storm(1)); d.Outcome != rules.Hold {
					t.Fatalf("the evicted pod is still there: web-1 %s (%s), want held", d.Outcome, d.Message)
				}
				gone = true
				m.ForgetPod(f.Pod, f.UID)
			}
			if d := m.Decide(storm(1)); d.Outcome != rules.Restart || !d.Canary {
				t.Fatalf("after the eviction %s: web-1 %s (%s), want the next canary", answer, d.Outcome, d.Message)
			}
		})
	}
}
