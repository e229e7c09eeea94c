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
