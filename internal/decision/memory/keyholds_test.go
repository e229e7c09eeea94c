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
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
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

var webApp = rules.HoldKey{Workload: rules.WorkloadKey{Namespace: "ns", Group: "apps", Kind: "Deployment", Name: "web"}, Container: "app"}

// decideAll decides pods 0–5 of the storm, as they are after mutate, and applies each restart
// as requested; it returns the restarts.
func decideAll(t *testing.T, m *Memory, step string, mutate func(*rules.Facts)) (restarts []rules.Decision) {
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

// One canary soon after the hold begins, then the rest, or a doubled wait when the canary fails
// again.
func TestDoubtHoldReleasesOneCanary(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{}, nil)
	if r := decideAll(t, m, "the storm starts", nil); len(r) != 0 {
		t.Fatalf("the storm starts: %d restarts", len(r))
	}
	clk.SetTime(clk.Now().Add(29 * time.Second))
	if r := decideAll(t, m, "within the first wait", nil); len(r) != 0 {
		t.Fatalf("within the first wait: %d restarts", len(r))
	}
	clk.SetTime(clk.Now().Add(time.Second))
	r := decideAll(t, m, "after the first wait", nil)
	if len(r) != 1 || !r[0].Canary {
		t.Fatalf("after the first wait: %d restarts, want one canary", len(r))
	}
	canary := r[0]

	// The canary's new container fails its probe soon after the restart: the wait doubles, to
	// maxHold (1m).
	clk.SetTime(clk.Now().Add(20 * time.Second))
	failedAgain := func(f *rules.Facts) {
		f.Refailures = []rules.Refailure{{Pod: canary.UID, Container: "app", ContainerID: "containerd://new",
			Started: clk.Now().Add(-15 * time.Second), FailedAt: clk.Now()}}
	}
	if r := decideAll(t, m, "the canary failed", failedAgain); len(r) != 0 {
		t.Fatalf("the canary failed: %d restarts", len(r))
	}
	h, _ := m.holds.of(webApp)
	if h.Period != time.Minute || h.Canary != nil || h.Canaries != 1 {
		t.Fatalf("after a failed canary: %+v", h)
	}
	clk.SetTime(clk.Now().Add(59 * time.Second))
	if r := decideAll(t, m, "within the doubled wait", nil); len(r) != 0 {
		t.Fatalf("within the doubled wait: %d restarts", len(r))
	}
	clk.SetTime(clk.Now().Add(time.Second))
	r = decideAll(t, m, "after the doubled wait", nil)
	if len(r) != 1 || !r[0].Canary {
		t.Fatalf("after the doubled wait: %d restarts, want one canary", len(r))
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
	r = decideAll(t, m, "the canary passed", passed)
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
	clk.SetTime(clk.Now().Add(rules.FirstCanaryWait))
	d := m.Decide(stormFacts(0))
	if d.Outcome != rules.Restart || !d.Canary {
		t.Fatalf("first canary: %s %s", d.Outcome, d.Message)
	}
	if d := m.Decide(stormFacts(1)); d.Outcome != rules.Hold {
		t.Fatalf("while the canary is in flight: %s", d.Outcome)
	}
	d.Outcome = rules.Withdrawn
	m.Apply(d)
	if h, _ := m.holds.of(webApp); h.Canary != nil || h.Canaries != 0 {
		t.Fatalf("the withdrawn canary is remembered: %+v", h)
	}
	if d := m.Decide(stormFacts(1)); d.Outcome != rules.Restart || !d.Canary {
		t.Fatalf("after the canary was withdrawn: %s %s", d.Outcome, d.Message)
	}
}

// A hold's record changes once per transition (it begins, a canary goes, the canary is judged,
// it ends), never because a decision looked at it again, and nothing is told while nothing is
// held.
func TestHoldRecordChangesOncePerTransition(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{}, nil)
	var told []rules.HoldKey
	m.NotifyHolds(func(keys []rules.HoldKey) { told = append(told, keys...) })
	expect := func(step string, n int) {
		t.Helper()
		if len(told) != n {
			t.Fatalf("%s: told %d changes %v, want %d", step, len(told), told, n)
		}
		told = nil
	}
	for i := range 3 {
		f, x := facts(i) // no storm, within the budget: restarted, nothing held
		if d := m.Decide(f, x); d.Outcome != rules.Restart {
			t.Fatalf("web-%d: %s", i, d.Outcome)
		}
	}
	expect("restarts without a hold", 0)
	m = New(clk, rules.Rate{}, nil)
	m.NotifyHolds(func(keys []rules.HoldKey) { told = append(told, keys...) })
	decideAll(t, m, "the storm starts", nil)
	expect("the storm starts", 1)
	for range 5 {
		clk.SetTime(clk.Now().Add(5 * time.Second))
		decideAll(t, m, "decided again", nil)
	}
	expect("decided again within the first wait", 0)
	clk.SetTime(clk.Now().Add(5 * time.Second))
	r := decideAll(t, m, "the canary goes", nil)
	expect("the canary goes", 1)
	if rec, ok := m.Record(webApp); !ok || rec.Hold.Canaries != 1 || rec.Hold.Canary == nil || !rec.Hold.Touched.IsZero() ||
		rec.Ref.Name != "web" {
		t.Fatalf("record %+v", rec)
	}
	clk.SetTime(clk.Now().Add(20 * time.Second))
	decideAll(t, m, "the canary failed", func(f *rules.Facts) {
		f.Refailures = []rules.Refailure{{Pod: r[0].UID, Container: "app", ContainerID: "containerd://new",
			Started: clk.Now().Add(-15 * time.Second), FailedAt: clk.Now()}}
	})
	expect("the canary failed", 1)
	for i := range 6 {
		m.Retain(types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("web-%d", i)}, nil)
	}
	expect("its pods recovered: it ends", 1)
	if _, ok := m.Record(webApp); ok {
		t.Fatal("a hold none of whose pods is held is kept")
	}
}

// A hold ends when none of its pods is held any more, not when a sibling's failure passes the
// doubt rules: an old storm still reaches its canary beside a new hang.
func TestHoldEndsWithItsPodsOnly(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := New(clk, rules.Rate{}, nil)
	old := func(f *rules.Facts) {
		for j := range 6 {
			f.Workload.Pods[j].Onset = t0.Add(-20 * time.Minute)
		}
		f.Workload.Onset = t0.Add(-20 * time.Minute)
	}
	decideAll(t, m, "an old storm", old)
	if _, ok := m.holds.of(webApp); !ok {
		t.Fatal("no hold")
	}
	// A new hang of pod 7, alone of its onset, passes every doubt rule and is restarted, at every
	// recheck until the old storm's canary is due.
	for range 3 {
		clk.SetTime(clk.Now().Add(10 * time.Second))
		f, x := stormFacts(7)
		old(f)
		f.Workload.Pods[7].Failing, f.Workload.Pods[7].Onset, f.Workload.Onset = true, clk.Now(), clk.Now()
		f.Self = f.Workload.Pods[7]
		if d := m.Decide(f, x); d.Outcome != rules.Restart {
			t.Fatalf("the new hang: %s %s (%s)", d.Outcome, d.Reason, d.Message)
		}
		m.Apply(rules.Decision{Verdict: rules.Verdict{Outcome: rules.Withdrawn}, Pod: f.Pod, UID: f.UID, Key: webApp, Failure: x, Policies: f.Policies})
	}
	if h, ok := m.holds.of(webApp); !ok || !h.Onset.Equal(t0) {
		t.Fatalf("the old storm's hold was reset: %+v %v", h, ok)
	}
	if r := decideAll(t, m, "the old storm's canary", old); len(r) != 1 || !r[0].Canary {
		t.Fatalf("the old storm's canary: %d restarts", len(r))
	}
}

// A manager restart (or a new leader) loads the holds from their records: they go on where they
// were, on the same clock, and the canary goes when it would have.
func TestLoadedHoldGoesOn(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	before := New(clk, rules.Rate{}, nil)
	decideAll(t, before, "the storm starts", nil)
	rec, ok := before.Record(webApp)
	if !ok {
		t.Fatal("no record")
	}
	// The leader is gone 20 s later; a new one starts 5 s after that and loads the records.
	clk.SetTime(t0.Add(25 * time.Second))
	after := New(clk, rules.Rate{}, nil)
	after.Load([]HoldRecord{rec})
	if r := decideAll(t, after, "the new leader, within the first wait", nil); len(r) != 0 {
		t.Fatalf("%d restarts within the first wait", len(r))
	}
	if h, _ := after.holds.of(webApp); !h.Onset.Equal(t0) {
		t.Fatalf("the hold started over: %+v", h)
	}
	clk.SetTime(t0.Add(30 * time.Second))
	if r := decideAll(t, after, "the canary is due", nil); len(r) != 1 || !r[0].Canary {
		t.Fatalf("%d restarts when the canary is due, want one canary", len(r))
	}
}

// A loaded hold none of whose pods is held again (they recovered while no manager ran) is swept.
func TestSweepEndsStaleHolds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := New(clk, rules.Rate{}, nil)
	var told []rules.HoldKey
	m.NotifyHolds(func(keys []rules.HoldKey) { told = append(told, keys...) })
	m.Load([]HoldRecord{{Key: webApp, Hold: rules.DoubtHold{Reason: policyv1alpha1.HoldFailureStorm, Onset: t0.Add(-time.Hour),
		Since: t0.Add(-time.Minute), Period: 2 * time.Minute}}})
	clk.SetTime(t0.Add(StaleHold))
	m.Sweep()
	if _, ok := m.Record(webApp); !ok || len(told) != 0 {
		t.Fatal("swept before StaleHold")
	}
	clk.SetTime(t0.Add(StaleHold + time.Second))
	m.Sweep()
	if _, ok := m.Record(webApp); ok || len(told) != 1 {
		t.Fatalf("not swept after StaleHold: told %v", told)
	}
}

// hangFacts is facts(i) of a workload whose 10 pods all hang and are not ready (their readiness
// fails with liveness), probed every second (a restart is judged 6 s after it), maxHold 10m;
// passed are the pods whose restart cured them.
func hangFacts(i int, passed ...types.UID) (*rules.Facts, rules.Failure) {
	f, x := facts(i)
	f.Policies[0].MaxFailing = intstr.FromString("50%")
	f.Policies[0].MaxHold = 10 * time.Minute
	for j := range f.Workload.Pods {
		p := &f.Workload.Pods[j]
		p.Ready, p.Healthy, p.Failing = false, false, true
		for _, uid := range passed {
			if p.UID == uid {
				p.Ready, p.Healthy, p.Failing = true, true, false
			}
		}
	}
	f.Self = f.Workload.Pods[i]
	x.Period, x.Threshold = 1, 3
	return f, x
}

// apiFacts is facts(i) of another workload of the same policy, one pod failing.
func apiFacts(i int) (*rules.Facts, rules.Failure) {
	f, x := facts(i)
	f.Workload.Ref.Name = "api"
	for j := range f.Workload.Pods {
		f.Workload.Pods[j].UID = types.UID(fmt.Sprintf("api-uid-%d", j))
	}
	f.Pod.Name, f.UID, f.Self = fmt.Sprintf("api-%d", i), f.Workload.Pods[i].UID, f.Workload.Pods[i]
	x.Request = fmt.Sprintf("api-%d-app", i)
	return f, x
}

// Once the canary's restart has proven to help (it passed, and has not failed again for the time
// that judges a restart), the held restarts of the workload follow at once with the buckets
// empty, taking what they hold and never driving them below empty; another workload of the same
// policy is still rate limited.
func TestPassedCanaryReleasesPastTheRateLimit(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	start := clk.Now()
	m := New(clk, rules.Rate{PerMinute: 60, Burst: 30}, nil) // the policy's: 6 a minute, burst 3
	var passed []types.UID
	// decide decides web's pods that were not restarted yet, applying each restart as requested.
	restarted := map[int]bool{}
	decide := func(at time.Duration) (restarts []rules.Decision, holds []rules.Decision) {
		clk.SetTime(start.Add(at))
		for i := range 10 {
			if restarted[i] {
				continue
			}
			d := m.Decide(hangFacts(i, passed...))
			switch d.Outcome {
			case rules.Restart:
				restarted[i] = true
				restarts = append(restarts, d)
				d.Outcome = rules.Requested
				m.Apply(d)
			case rules.Hold:
				holds = append(holds, d)
			}
		}
		return restarts, holds
	}
	if r, _ := decide(0); len(r) != 0 {
		t.Fatalf("the storm begins: %d restarts", len(r))
	}
	r, _ := decide(rules.FirstCanaryWait)
	if len(r) != 1 || !r[0].Canary || r[0].Proven {
		t.Fatalf("30 s on: %d restarts, want the canary alone (%+v)", len(r), r)
	}
	canary := r[0]
	// Two restarts of another workload empty the policy's bucket (3, less the canary's).
	for i := range 2 {
		if d := m.Decide(apiFacts(i)); d.Outcome != rules.Restart {
			t.Fatalf("api-%d: %s %s (%s)", i, d.Outcome, d.Reason, d.Message)
		}
	}

	// 10 s on the canary's new container passes: the others wait until it has stood 6 s.
	passed = append(passed, canary.UID)
	m.RequestFinished(canary.UID, canary.Failure.Request)
	r, held := decide(40 * time.Second)
	if len(r) != 0 || len(held) != 9 {
		t.Fatalf("the canary passed: %d restarts, %d held, want the 9 held", len(r), len(held))
	}
	for _, d := range held {
		if d.Reason != policyv1alpha1.HoldFailureStorm || d.RequeueAfter != 6*time.Second {
			t.Fatalf("%s held %s, decided again in %s (%s); want FailureStorm until the canary has stood 6 s", d.Pod.Name, d.Reason, d.RequeueAfter, d.Message)
		}
	}

	// 6 s later it has not failed again: the other 9 go at once, the buckets empty.
	r, held = decide(46 * time.Second)
	if len(r) != 9 || len(held) != 0 {
		t.Fatalf("proven: %d restarts, %d held; want the other 9 restarted", len(r), len(held))
	}
	for _, d := range r {
		if !d.Proven {
			t.Fatalf("%s restarted, not as proven", d.Pod.Name)
		}
	}
	if got := m.buckets.tokens(policyKey, clk.Now()); got != 0 {
		t.Fatalf("the policy's bucket holds %v tokens, want 0: drained, never below empty", got)
	}

	// another workload of the policy is still rate limited.
	if d := m.Decide(apiFacts(2)); d.Outcome != rules.Hold || d.Reason != policyv1alpha1.HoldRateLimited {
		t.Fatalf("api-2: %s %s (%s), want RateLimited", d.Outcome, d.Reason, d.Message)
	}
}
