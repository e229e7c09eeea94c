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
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

var policyKey = rules.PolicyKey{Namespace: "ns", Name: "p"}

// facts of pod i of a healthy 10-replica Deployment whose container failed: everything allows
// its restart. The workload's pods are web-0 … web-9, pod i among them.
func facts(i int) (*rules.Facts, rules.Failure) {
	pol := rules.Policy{Key: policyKey, MaxUnavailable: ptr.To(intstr.FromString("25%")), MaxFailing: intstr.FromString("100%"),
		Rate: rules.Rate{PerMinute: 6, Burst: 3}, Breaker: rules.DefaultRestartBreaker}
	pods := make([]rules.PodState, 10)
	for j := range pods {
		pods[j] = rules.PodState{UID: types.UID(fmt.Sprintf("uid-%d", j)), Ready: true, Healthy: true}
	}
	f := &rules.Facts{
		Pod: types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("web-%d", i)}, UID: pods[i].UID, Found: true,
		Daemon:   rules.Daemon{Reporting: true},
		Policies: rules.Governing{pol},
		Workload: rules.WorkloadState{Ref: rules.WorkloadRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, Desired: 10, Pods: pods},
		Self:     pods[i],
		Node:     rules.NodeState{Name: "n1", Pods: 10, FailingPods: 1, FailingWorkloads: 1},
		Settings: rules.Settings{RestartsEnabled: true, NodeStorm: rules.NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 3}},
	}
	id := fmt.Sprintf("containerd://%d", i)
	return f, rules.Failure{Probe: "app", Container: "app", ContainerID: id, Running: id, Request: fmt.Sprintf("web-%d-app", i)}
}

// Only a restart takes a token: held and ignored decisions never use up the rate limit.
func TestOnlyARestartTakesATokenFromEachBucket(t *testing.T) {
	for _, c := range []struct {
		name    string
		mutate  func(*rules.Facts, *rules.Failure)
		outcome rules.Outcome
	}{
		{"restart", func(*rules.Facts, *rules.Failure) {}, rules.Restart},
		{"stale", func(_ *rules.Facts, x *rules.Failure) { x.Running = "containerd://other" }, rules.Ignore},
		{"daemon not reporting", func(f *rules.Facts, _ *rules.Failure) { f.Daemon.Reporting = false }, rules.Hold},
		{"shadow", func(f *rules.Facts, _ *rules.Failure) { f.Shadow = true }, rules.Hold},
		{"active request", func(f *rules.Facts, _ *rules.Failure) { f.Self.ActiveCRR = true }, rules.Wait},
		{"storm", func(f *rules.Facts, _ *rules.Failure) {
			f.Policies[0].MaxFailing = intstr.FromInt32(0)
			f.Workload.Pods[0].Failing = true
		}, rules.Hold},
		{"budget", func(f *rules.Facts, _ *rules.Failure) { f.Policies[0].MaxUnavailable = ptr.To(intstr.FromInt32(0)) }, rules.Hold},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			m := New(clk, rules.Rate{PerMinute: 60, Burst: 10}, nil)
			f, x := facts(0)
			c.mutate(f, &x)
			d := m.Decide(f, x)
			if d.Outcome != c.outcome {
				t.Fatalf("decided %s/%s (%s), want %s", d.Outcome, d.Reason, d.Message, c.outcome)
			}
			wantPolicy, wantGlobal := 3.0, 10.0
			if d.Outcome == rules.Restart {
				wantPolicy, wantGlobal = 2, 9
			}
			if got := m.buckets.tokens(policyKey, clk.Now()); got != -1 && got != wantPolicy {
				t.Fatalf("the policy's bucket has %v tokens, want %v", got, wantPolicy)
			}
			if m.buckets.global.refill(clk.Now()); m.buckets.global.tokens != wantGlobal {
				t.Fatalf("the manager-wide bucket has %v tokens, want %v", m.buckets.global.tokens, wantGlobal)
			}
		})
	}
}

func TestDecideRateLimited(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{}, nil)
	for i := range 3 {
		if d := m.Decide(facts(i)); d.Outcome != rules.Restart {
			t.Fatalf("restart %d: %s %s", i, d.Outcome, d.Message)
		}
	}
	// Three restarts in flight: the next one is within the budget again once they are given back.
	for i := range 3 {
		f, x := facts(i)
		m.RequestFinished(f.UID, x.Request)
	}
	d := m.Decide(facts(3))
	if d.Outcome != rules.Hold || d.Reason != policyv1alpha1.HoldRateLimited || d.RequeueAfter != 10*time.Second {
		t.Fatalf("got %s/%s after %s", d.Outcome, d.Reason, d.RequeueAfter)
	}
	clk.SetTime(clk.Now().Add(d.RequeueAfter))
	if d := m.Decide(facts(3)); d.Outcome != rules.Restart {
		t.Fatalf("after the wait: %s %s", d.Outcome, d.Message)
	}
}

// The budget holds when failures of one workload are decided at once: each decision sees the
// restarts decided before it, although the facts of all were read before any of them.
func TestDecideConcurrentlyKeepsTheBudget(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{}, nil)
	type read struct {
		f *rules.Facts
		x rules.Failure
	}
	var reads []read
	for i := range 8 {
		f, x := facts(i)
		f.Policies[0].Rate = rules.Rate{PerMinute: 600, Burst: 100}
		reads = append(reads, read{f, x})
	}
	var wg sync.WaitGroup
	outcomes := make(chan rules.Decision, len(reads))
	for _, r := range reads {
		wg.Go(func() { outcomes <- m.Decide(r.f, r.x) })
	}
	wg.Wait()
	close(outcomes)
	restarts, held := 0, 0
	for d := range outcomes {
		switch {
		case d.Outcome == rules.Restart:
			restarts++
		case d.Reason == policyv1alpha1.HoldMaxUnavailable:
			held++
		default:
			t.Errorf("decided %s/%s: %s", d.Outcome, d.Reason, d.Message)
		}
	}
	// maxUnavailable 25% of 10 is 3.
	if restarts != 3 || held != 5 {
		t.Fatalf("%d restarts and %d held, want 3 and 5", restarts, held)
	}
}

// What comes of a restart: created, it releases the hold and is remembered and counted; not
// created, it gives its tokens back and is no longer expected.
func TestApply(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var told [][]rules.PolicyKey
	m := New(clk, rules.Rate{}, func(keys []rules.PolicyKey) { told = append(told, keys) })
	tellsOnce := func(what string) {
		t.Helper()
		if len(told) != 1 || len(told[0]) != 1 || told[0][0] != policyKey {
			t.Fatalf("%s: the status controller is told %v, want %v once", what, told, policyKey)
		}
		told = nil
	}
	f, x := facts(0)
	f.Policies = append(f.Policies, rules.Policy{Key: rules.DefaultPolicyKey("ns"), Rate: rules.Rate{PerMinute: 6, Burst: 3},
		MaxUnavailable: ptr.To(intstr.FromString("100%")), MaxFailing: intstr.FromString("100%")})
	web := f.Workload.Ref.Key("ns")

	f.Shadow = true
	d := m.Decide(f, x)
	if !d.NewHold || m.Snapshot(policyKey).Counts.Held[policyv1alpha1.HoldShadow] != 1 {
		t.Fatalf("a new hold is counted: %+v", m.Snapshot(policyKey).Counts)
	}
	tellsOnce("a new hold")
	if d = m.Decide(f, x); d.NewHold || m.Snapshot(policyKey).Counts.Held[policyv1alpha1.HoldShadow] != 1 || told != nil {
		t.Fatal("the same hold decided again is not counted again")
	}
	if got := m.HeldInWorkload(web); len(got) != 1 || got[0] != f.Pod {
		t.Fatalf("held in the workload: %v", got)
	}
	if s := m.Snapshot(policyKey); s.Reasons[web] != policyv1alpha1.HoldShadow {
		t.Fatalf("the status sees the hold: %v", s.Reasons)
	}
	if got := m.Snapshot(rules.DefaultPolicyKey("ns")).Counts; !got.IsZero() {
		t.Fatalf("the default policy has no status to count in: %+v", got)
	}

	f.Shadow = false
	d = m.Decide(f, x)
	if d.Outcome != rules.Restart || d.Held != policyv1alpha1.HoldShadow || !m.Snapshot(policyKey).Pending(f.UID) {
		t.Fatalf("decided %s, held before %q: the restart of a held instance is expected", d.Outcome, d.Held)
	}
	d.Outcome = rules.Withdrawn
	m.Apply(d)
	if m.Snapshot(policyKey).Pending(f.UID) || m.buckets.tokens(policyKey, clk.Now()) != 3 || told != nil {
		t.Fatalf("withdrawn: pending %v, %v tokens", m.Snapshot(policyKey).Pending(f.UID), m.buckets.tokens(policyKey, clk.Now()))
	}
	if len(m.HeldInWorkload(web)) != 1 {
		t.Fatal("a withdrawn restart stays held")
	}

	d = m.Decide(f, x)
	d.Outcome = rules.Requested
	m.Apply(d)
	tellsOnce("a restart requested")
	s := m.Snapshot(policyKey)
	if len(m.HeldInWorkload(web)) != 0 || s.Counts.Requested != 1 || !s.Counts.LastRestart.Equal(clk.Now()) || !s.Pending(f.UID) {
		t.Fatalf("requested: held %v, counts %+v, pending %v", m.HeldInWorkload(web), s.Counts, s.Pending(f.UID))
	}
	if r := m.restarts.of(web); len(r) != 1 || r[0].Instance != x.ContainerID || r[0].Soon != d.Soon || d.Soon == 0 {
		t.Fatalf("remembered restarts: %+v", r)
	}
	m.ForgetPod(f.Pod, f.UID)
	if m.Snapshot(policyKey).Pending(f.UID) || len(m.restarts.of(web)) != 0 {
		t.Fatal("a pod gone is forgotten")
	}
	m.ForgetPolicy(policyKey)
	if !m.Snapshot(policyKey).Counts.IsZero() || m.buckets.tokens(policyKey, clk.Now()) != -1 {
		t.Fatal("a policy gone is forgotten")
	}
}

// A storm seen by any decision holds the workload's restarts until it has settled.
func TestStormsSettleAcrossDecisions(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{}, nil)
	storm := func(f *rules.Facts) {
		f.Settings.StormSettle = 30 * time.Second
		f.Policies[0].MaxFailing = intstr.FromInt32(1)
	}
	f, x := facts(0)
	storm(f)
	f.Workload.Pods[1].Failing, f.Workload.Pods[2].Failing = true, true
	f.Shadow = true // held by the switch, the storm is seen all the same
	if d := m.Decide(f, x); d.Reason != policyv1alpha1.HoldShadow {
		t.Fatalf("decided %s/%s", d.Outcome, d.Reason)
	}
	clk.SetTime(clk.Now().Add(10 * time.Second))
	f, x = facts(1)
	storm(f)
	if d := m.Decide(f, x); d.Reason != policyv1alpha1.HoldFailureStorm || d.RequeueAfter != 20*time.Second {
		t.Fatalf("decided %s/%s, again in %s: the storm settles", d.Outcome, d.Reason, d.RequeueAfter)
	}
	if h := m.Snapshot(policyKey).Holds(f.Workload.Ref.Key("ns")); !h.StormSeen || !h.LastStorm.Equal(clk.Now().Add(-10*time.Second)) {
		t.Fatalf("the status sees the storm's last sight: %+v", h)
	}
	clk.SetTime(clk.Now().Add(20 * time.Second))
	if d := m.Decide(f, x); d.Outcome != rules.Restart {
		t.Fatalf("decided %s/%s once settled", d.Outcome, d.Reason)
	}
	if len(m.storms) != 0 || len(m.stormOnsets) != 0 {
		t.Fatal("a settled storm is forgotten")
	}
}

// The onset of the pod that saw a storm is kept with its settle timer: a pod whose failures began
// apart from that storm's is not held while it settles.
func TestStormSettleKeepsTheStormsOnset(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := New(clk, rules.Rate{}, nil)
	storm := func(f *rules.Facts, onset time.Time) {
		f.Settings.StormSettle = 30 * time.Second
		f.Policies[0].MaxFailing = intstr.FromInt32(1)
		f.Workload.Onset = onset
		for i := range f.Workload.Pods {
			if f.Workload.Pods[i].Failing {
				f.Workload.Pods[i].Onset = onset
			}
		}
	}
	// Pods failing together since t0 - 20m, held in Shadow, see their storm.
	f, x := facts(0)
	f.Workload.Pods[1].Failing, f.Workload.Pods[2].Failing = true, true
	storm(f, t0.Add(-20*time.Minute))
	f.Shadow = true
	if d := m.Decide(f, x); d.Reason != policyv1alpha1.HoldShadow {
		t.Fatalf("decided %s/%s", d.Outcome, d.Reason)
	}
	w := rules.HoldKey{Workload: f.Workload.Ref.Key("ns"), Container: "app"}
	if got := (view{m: m, now: clk.Now()}).StormOnset(w); !got.Equal(t0.Add(-20 * time.Minute)) {
		t.Fatalf("the storm's onset %s", got)
	}
	// A new hang 10 s later, alone of its onset: restarted, and the old storm's timer is kept.
	clk.SetTime(t0.Add(10 * time.Second))
	f, x = facts(1)
	storm(f, clk.Now())
	if d := m.Decide(f, x); d.Outcome != rules.Restart {
		t.Fatalf("decided %s/%s: %s", d.Outcome, d.Reason, d.Message)
	}
	if _, ok := m.storms[w]; !ok {
		t.Fatal("the old storm's settle timer is kept")
	}
}

// A restart found not to have helped, and an expected request seen finished, are kept.
func TestDecideKeepsWhatItSaw(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{}, nil)
	f, x := facts(1)
	d := m.Decide(f, x)
	d.Outcome = rules.Requested
	m.Apply(d)

	// The restarted container fails again at once; pod 0 fails too and its decision sees it.
	clk.SetTime(clk.Now().Add(20 * time.Second))
	f, x = facts(0)
	f.Workload.Pods[1].Finished = []string{"web-1-app"}
	f.Refailures = []rules.Refailure{{Pod: "uid-1", Container: "app", ContainerID: "containerd://1b",
		Started: clk.Now().Add(-10 * time.Second), FailedAt: clk.Now()}}
	if d := m.Decide(f, x); d.Outcome != rules.Restart || len(d.Seen.Ineffective) != 1 || len(d.Seen.Finished) != 1 {
		t.Fatalf("decided %s, seen %+v", d.Outcome, d.Seen)
	}
	web := f.Workload.Ref.Key("ns")
	if r := m.restarts.of(web); len(r) != 1 || !r[0].Ineffective {
		t.Fatalf("restarts %+v: the first one did not help", r)
	}
	if m.Snapshot(policyKey).Pending("uid-1") {
		t.Fatal("the expected request seen finished is over")
	}
}

// A Wait is woken with the holds of its workload, until it is decided otherwise, stops failing or
// its pod is gone.
func TestWaitsAreWokenWithTheirWorkload(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{}, nil)
	_, x := facts(0)
	web := rules.WorkloadKey{Namespace: "ns", Group: "apps", Kind: "Deployment", Name: "web"}
	pod := types.NamespacedName{Namespace: "ns", Name: "web-1"}
	inst := rules.Instance{Container: x.Container, ContainerID: x.ContainerID}
	wait := rules.Decision{Verdict: rules.Verdict{Outcome: rules.Wait}, Pod: pod, Workload: web, Failure: x}

	m.Apply(wait)
	if got := m.HeldInWorkload(web); len(got) != 1 || got[0] != pod {
		t.Fatalf("a waiting pod is not woken with its workload: %v", got)
	}
	if got := m.HeldInWorkload(rules.WorkloadKey{Namespace: "ns", Kind: "Deployment", Name: "db"}); len(got) != 0 {
		t.Fatalf("woken with another workload: %v", got)
	}
	requested := wait
	requested.Outcome = rules.Requested
	m.Apply(requested)
	if got := m.HeldInWorkload(web); len(got) != 0 {
		t.Fatalf("a restart requested still waits: %v", got)
	}
	m.Apply(wait)
	m.Retain(pod, []rules.Instance{inst})
	if len(m.HeldInWorkload(web)) != 1 {
		t.Fatal("a wait of an instance still failing is forgotten")
	}
	m.Retain(pod, nil)
	if got := m.HeldInWorkload(web); len(got) != 0 {
		t.Fatalf("a wait of an instance no longer failing is kept: %v", got)
	}
	m.Apply(wait)
	m.ForgetPod(pod, "")
	if got := m.HeldInWorkload(web); len(got) != 0 || len(m.instances.byPod) != 0 || len(m.instances.byWorkload) != 0 {
		t.Fatalf("a pod gone still waits: %v %v", got, m.instances.byPod)
	}
}

// Judge says what the rules would decide and leaves the memory as it was: no token taken, no hold
// remembered.
func TestJudgeChangesNothing(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk, rules.Rate{PerMinute: 60, Burst: 1}, nil)
	f, x := facts(0)
	for range 3 {
		if d := m.Judge(f, x); d.Outcome != rules.Restart {
			t.Fatalf("Judge() = %s (%s), want Restart", d.Outcome, d.Reason)
		}
	}
	// The one token of the burst is still there for the real decision.
	if d := m.Decide(f, x); d.Outcome != rules.Restart {
		t.Fatalf("Decide() after Judge() = %s (%s), want Restart", d.Outcome, d.Reason)
	}
	f2, x2 := facts(1)
	f2.Policies[0].MaxUnavailable = ptr.To(intstr.FromInt32(0))
	if d := m.Judge(f2, x2); d.Outcome != rules.Hold || !d.NewHold {
		t.Fatalf("Judge() = %s new=%v, want a new Hold", d.Outcome, d.NewHold)
	}
	if d := m.Decide(f2, x2); !d.NewHold {
		t.Fatalf("Decide() after Judge(): the hold is not new: Judge remembered it")
	}
}
