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

// stormFacts is facts(i) in a storm: pods 0–5 of 10 failing, maxFailing 50%, maxHold 1m.
func stormFacts(i int) (*rules.Facts, rules.Failure) {
	f, x := facts(i)
	f.Policies[0].MaxFailing = intstr.FromString("50%")
	f.Policies[0].MaxHold = time.Minute
	for j := range 6 {
		f.Workload.Pods[j].Failing, f.Workload.Pods[j].Healthy = true, false
	}
	f.Self = f.Workload.Pods[i]
	return f, x
}

// One canary per hold period, then the rest, or a doubled period when the canary fails again.
func TestDoubtHoldReleasesOneCanary(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{}, nil)
	decideAll := func(step string, mutate func(*rules.Facts)) (restarts []rules.Decision) {
		t.Helper()
		for i := range 6 {
			f, x := stormFacts(i)
			if mutate != nil {
				mutate(f)
			}
			d := m.Decide(f, x)
			switch d.Outcome {
			case rules.Restart:
				d.Outcome = rules.Requested
				m.Apply(d)
				restarts = append(restarts, d)
			case rules.Hold:
				if d.Reason != policyv1alpha1.HoldFailureStorm && d.Reason != policyv1alpha1.HoldMaxUnavailable {
					t.Fatalf("%s: web-%d held %s (%s)", step, i, d.Reason, d.Message)
				}
			}
		}
		return restarts
	}
	if r := decideAll("the storm starts", nil); len(r) != 0 {
		t.Fatalf("the storm starts: %d restarts", len(r))
	}
	clk.SetTime(clk.Now().Add(59 * time.Second))
	if r := decideAll("within maxHold", nil); len(r) != 0 {
		t.Fatalf("within maxHold: %d restarts", len(r))
	}
	clk.SetTime(clk.Now().Add(time.Second))
	r := decideAll("after maxHold", nil)
	if len(r) != 1 || !r[0].Canary {
		t.Fatalf("after maxHold: %d restarts, want one canary", len(r))
	}
	canary := r[0]

	// The canary's new container fails its probe soon after the restart: the hold starts over,
	// twice as long.
	clk.SetTime(clk.Now().Add(20 * time.Second))
	failedAgain := func(f *rules.Facts) {
		f.Refailures = []rules.Refailure{{Pod: canary.UID, Container: "app", ContainerID: "containerd://new",
			Started: clk.Now().Add(-15 * time.Second), FailedAt: clk.Now()}}
	}
	if r := decideAll("the canary failed", failedAgain); len(r) != 0 {
		t.Fatalf("the canary failed: %d restarts", len(r))
	}
	h, _ := m.doubts.of(canary.Workload)
	if h.Period != 2*time.Minute || h.Canary != nil {
		t.Fatalf("after a failed canary: %+v", h)
	}
	clk.SetTime(clk.Now().Add(time.Minute + 30*time.Second))
	if r := decideAll("within the doubled period", nil); len(r) != 0 {
		t.Fatalf("within the doubled period: %d restarts", len(r))
	}
	clk.SetTime(clk.Now().Add(30 * time.Second))
	r = decideAll("after the doubled period", nil)
	if len(r) != 1 || !r[0].Canary {
		t.Fatalf("after the doubled period: %d restarts, want one canary", len(r))
	}

	// This canary passes its probe: the others follow.
	second := r[0]
	clk.SetTime(clk.Now().Add(30 * time.Second))
	passed := func(f *rules.Facts) {
		for j := range f.Workload.Pods {
			if f.Workload.Pods[j].UID == second.UID {
				f.Workload.Pods[j] = rules.PodState{UID: second.UID, Ready: true, Healthy: true}
			}
		}
	}
	for _, c := range []rules.Decision{canary, second} {
		m.RequestFinished(c.UID, c.Failure.Request)
	}
	r = decideAll("the canary passed", passed)
	// Five pods left failing; maxUnavailable 25% of 10 is 3, and they are ready: the budget lets 3 through.
	if len(r) != 3 {
		t.Fatalf("after the canary passed: %d restarts, want 3 (the budget)", len(r))
	}
}

// A canary whose request was not created frees the place for another.
func TestWithdrawnCanaryLetsAnotherGo(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{}, nil)
	m.Decide(stormFacts(0))
	clk.SetTime(clk.Now().Add(time.Minute))
	d := m.Decide(stormFacts(0))
	if d.Outcome != rules.Restart || !d.Canary {
		t.Fatalf("first canary: %s %s", d.Outcome, d.Message)
	}
	if d := m.Decide(stormFacts(1)); d.Outcome != rules.Hold {
		t.Fatalf("while the canary is in flight: %s", d.Outcome)
	}
	d.Outcome = rules.Withdrawn
	m.Apply(d)
	if d := m.Decide(stormFacts(1)); d.Outcome != rules.Restart || !d.Canary {
		t.Fatalf("after the canary was withdrawn: %s %s", d.Outcome, d.Message)
	}
}
