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

package rules

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

func TestBoundDoubt(t *testing.T) {
	const maxHold = 10 * time.Minute
	canary := &Canary{Pod: "pod-1", PodName: "web-1", Container: "app", Instance: "containerd://c", At: t0.Add(10 * time.Minute),
		Deadline: t0.Add(13 * time.Minute)}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	held := DoubtHold{Since: t0, Period: maxHold, Touched: at(9 * time.Minute)}
	withCanary := held
	withCanary.Canary, withCanary.Touched = canary, at(10*time.Minute)
	cases := []struct {
		name    string
		st      DoubtHold
		seen    bool
		maxHold time.Duration
		result  CanaryResult
		now     time.Time
		release bool
		canary  bool
		next    DoubtHold
	}{
		{"a new hold starts with maxHold", DoubtHold{}, false, maxHold, CanaryPending, t0, false, false,
			DoubtHold{Since: t0, Period: maxHold, Touched: t0}},
		{"held within maxHold", held, true, maxHold, CanaryPending, at(9*time.Minute + 30*time.Second), false, false,
			DoubtHold{Since: t0, Period: maxHold, Touched: at(9*time.Minute + 30*time.Second)}},
		{"released as the canary after maxHold", held, true, maxHold, CanaryPending, at(10 * time.Minute), true, true,
			DoubtHold{Since: t0, Period: maxHold, Touched: at(10 * time.Minute)}},
		{"only one canary: the others wait for it", withCanary, true, maxHold, CanaryPending, at(11 * time.Minute), false, false,
			DoubtHold{Since: t0, Period: maxHold, Touched: at(11 * time.Minute), Canary: canary}},
		{"the canary passed: the others are released", withCanary, true, maxHold, CanaryPassed, at(12 * time.Minute), true, false,
			DoubtHold{Since: t0, Period: maxHold, Touched: at(12 * time.Minute), Released: at(12 * time.Minute)}},
		{"released for a period after the canary passed", DoubtHold{Since: t0, Period: maxHold, Touched: at(13 * time.Minute), Released: at(12 * time.Minute)},
			true, maxHold, CanaryPending, at(14 * time.Minute), true, false,
			DoubtHold{Since: t0, Period: maxHold, Touched: at(14 * time.Minute), Released: at(12 * time.Minute)}},
		{"a doubt a period after the canary passed is a new hold", DoubtHold{Since: t0, Period: 2 * maxHold, Touched: at(30 * time.Minute), Released: at(12 * time.Minute)},
			true, maxHold, CanaryPending, at(32 * time.Minute), false, false,
			DoubtHold{Since: at(32 * time.Minute), Period: maxHold, Touched: at(32 * time.Minute)}},
		{"the canary failed: the hold starts over, doubled", withCanary, true, maxHold, CanaryFailed, at(12 * time.Minute), false, false,
			DoubtHold{Since: at(12 * time.Minute), Period: 2 * maxHold, Touched: at(12 * time.Minute)}},
		{"the doubled period is capped at 8 × maxHold", DoubtHold{Since: t0, Period: 8 * maxHold, Touched: at(81 * time.Minute), Canary: canary},
			true, maxHold, CanaryFailed, at(82 * time.Minute), false, false,
			DoubtHold{Since: at(82 * time.Minute), Period: 8 * maxHold, Touched: at(82 * time.Minute)}},
		{"a lost canary lets another pod be the canary", withCanary, true, maxHold, CanaryLost, at(11 * time.Minute), true, true,
			DoubtHold{Since: t0, Period: maxHold, Touched: at(11 * time.Minute)}},
		{"maxHold 0s: never released", held, true, 0, CanaryPending, at(24 * time.Hour), false, false,
			DoubtHold{Since: at(24 * time.Hour), Period: 0, Touched: at(24 * time.Hour)}},
		{"maxHold 0s: a hold kept within its period is never released", DoubtHold{Since: t0, Touched: at(9 * time.Minute)}, true, 0, CanaryPending, at(10 * time.Minute), false, false,
			DoubtHold{Since: t0, Touched: at(10 * time.Minute)}},
		{"a hold no decision saw for two periods is over", held, true, maxHold, CanaryPending, at(30*time.Minute + time.Second), false, false,
			DoubtHold{Since: at(30*time.Minute + time.Second), Period: maxHold, Touched: at(30*time.Minute + time.Second)}},
		{"a longer maxHold lengthens the current hold", held, true, 2 * maxHold, CanaryPending, at(10 * time.Minute), false, false,
			DoubtHold{Since: t0, Period: 2 * maxHold, Touched: at(10 * time.Minute)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			judged := 0
			judge := func(Canary) CanaryResult { judged++; return tc.result }
			got := BoundDoubt(tc.st, tc.seen, tc.maxHold, judge, tc.now)
			if got.Release != tc.release || got.Canary != tc.canary {
				t.Errorf("release %v canary %v, want %v %v (%s)", got.Release, got.Canary, tc.release, tc.canary, got.Message)
			}
			if !equalDoubt(got.Next, tc.next) {
				t.Errorf("next %+v, want %+v", got.Next, tc.next)
			}
			if !got.Release && got.Message == "" {
				t.Error("a hold must say how it ends")
			}
			if tc.st.Canary == nil && judged > 0 {
				t.Error("judged a canary that is not there")
			}
		})
	}
}

func equalDoubt(a, b DoubtHold) bool {
	return a.Since.Equal(b.Since) && a.Period == b.Period && a.Touched.Equal(b.Touched) && a.Released.Equal(b.Released) &&
		(a.Canary == nil) == (b.Canary == nil) && (a.Canary == nil || *a.Canary == *b.Canary)
}

func TestJudgeCanary(t *testing.T) {
	k := Canary{Pod: "pod-1", Container: "app", Instance: "containerd://old", At: t0, Deadline: t0.Add(3 * time.Minute)}
	id := RestartID{Pod: "pod-1", Container: "app", Instance: "containerd://old", At: t0.Add(time.Second)}
	healthy := []PodState{{UID: "pod-0", Failing: true}, {UID: "pod-1", Ready: true, Healthy: true}}
	unprobed := []PodState{{UID: "pod-0", Failing: true}, {UID: "pod-1"}}
	cases := []struct {
		name     string
		pods     []PodState
		restarts []RestartRecord
		found    []RestartID
		now      time.Time
		want     CanaryResult
	}{
		{"new container not probed yet", unprobed, []RestartRecord{{RestartID: id}}, nil, t0.Add(time.Minute), CanaryPending},
		{"new container passes its probe", healthy, []RestartRecord{{RestartID: id}}, nil, t0.Add(time.Minute), CanaryPassed},
		{"still being restarted", []PodState{{UID: "pod-1", Healthy: true, ActiveCRR: true}}, nil, nil, t0.Add(time.Minute), CanaryPending},
		{"new container failed soon after the restart, found now", unprobed, []RestartRecord{{RestartID: id}}, []RestartID{id}, t0.Add(time.Minute), CanaryFailed},
		{"new container failed soon after the restart, found before", healthy, []RestartRecord{{RestartID: id, Ineffective: true}}, nil, t0.Add(time.Minute), CanaryFailed},
		{"another restart's failure is not the canary's", unprobed, []RestartRecord{{RestartID: id}},
			[]RestartID{{Pod: "pod-0", Container: "app", Instance: "containerd://x"}}, t0.Add(time.Minute), CanaryPending},
		{"no pass by the deadline", unprobed, []RestartRecord{{RestartID: id}}, nil, t0.Add(4 * time.Minute), CanaryFailed},
		{"pod gone", []PodState{{UID: "pod-0", Failing: true}}, nil, nil, t0.Add(time.Minute), CanaryLost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := JudgeCanary(k, tc.pods, tc.restarts, tc.found, tc.now); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestMaxHoldOfGoverning(t *testing.T) {
	a := Policy{Key: PolicyKey{Namespace: "ns", Name: "a"}, MaxHold: 10 * time.Minute}
	b := Policy{Key: PolicyKey{Namespace: "ns", Name: "b"}, MaxHold: 30 * time.Minute}
	never := Policy{Key: PolicyKey{Namespace: "ns", Name: "never"}}
	if h, by := (Governing{a, b}).MaxHold(); h != 30*time.Minute || by != b.Key {
		t.Errorf("longest wins: got %s by %s", h, by)
	}
	if h, by := (Governing{a, never, b}).MaxHold(); h != 0 || by != never.Key {
		t.Errorf("never wins: got %s by %s", h, by)
	}
}

// stormFacts is baseFacts in a workload storm: 6 of 10 pods failing, all ready.
func stormFacts() (*Facts, Failure) {
	f, x := baseFacts()
	f.Workload.Pods = pods(10, 10, 6, 0)
	f.Workload.Pods[0].UID = "pod-0"
	f.Policies[0].MaxHold = 10 * time.Minute
	return f, x
}

func TestDecideBoundsDoubtHolds(t *testing.T) {
	held := DoubtHold{Since: t0.Add(-10 * time.Minute), Period: 10 * time.Minute, Touched: t0.Add(-10 * time.Second)}
	cases := []struct {
		name    string
		mutate  func(*Facts, *Failure, *fakeMemory)
		outcome Outcome
		reason  policyv1alpha1.HoldReason
		canary  bool
		ended   bool
	}{
		{"a storm starts a hold", func(*Facts, *Failure, *fakeMemory) {}, Hold, policyv1alpha1.HoldFailureStorm, false, false},
		{"after maxHold one pod goes as the canary", func(_ *Facts, _ *Failure, m *fakeMemory) { m.doubts[web] = held },
			Restart, "", true, false},
		{"the canary is still rate limited", func(_ *Facts, _ *Failure, m *fakeMemory) { m.doubts[web] = held; m.tokenWait = time.Second },
			Hold, policyv1alpha1.HoldRateLimited, false, false},
		{"the canary still needs budget", func(f *Facts, _ *Failure, m *fakeMemory) {
			m.doubts[web] = held
			for i := 1; i <= 3; i++ {
				f.Workload.Pods[i].Ready = false
			}
		}, Hold, policyv1alpha1.HoldMaxUnavailable, false, false},
		{"the canary still waits for the pod's active restart", func(f *Facts, _ *Failure, m *fakeMemory) {
			m.doubts[web] = held
			m.expected["pod-0"] = "web-0-app-0"
		}, Wait, "", false, false},
		{"a node storm is a doubt hold too", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Workload.Pods = pods(10, 10, 1, 0)
			f.Node = NodeState{Name: "n1", Pods: 10, FailingPods: 6, FailingWorkloads: 3}
			m.doubts[web] = held
		}, Restart, "", true, false},
		{"a daemon not reporting is a doubt hold too", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Workload.Pods = pods(10, 10, 1, 0)
			f.Daemon.Reporting = false
			m.doubts[web] = held
		}, Restart, "", true, false},
		{"released past a second doubt rule too", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Node = NodeState{Name: "n1", Pods: 10, FailingPods: 6, FailingWorkloads: 3}
			m.doubts[web] = held
		}, Restart, "", true, false},
		{"maxHold 0s holds for ever", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Policies[0].MaxHold = 0
			m.doubts[web] = DoubtHold{Since: t0.Add(-48 * time.Hour), Touched: t0.Add(-10 * time.Second)}
		}, Hold, policyv1alpha1.HoldFailureStorm, false, false},
		{"a choice is never bounded", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.RestartDisabled = true
			m.doubts[web] = held
		}, Hold, policyv1alpha1.HoldDisabled, false, false},
		{"no doubt left: the hold is over", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Workload.Pods = pods(10, 10, 1, 0)
			m.doubts[web] = held
		}, Restart, "", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, x := stormFacts()
			m := newFakeMemory()
			m.doubts = map[WorkloadKey]DoubtHold{}
			tc.mutate(f, &x, m)
			d := Decide(f, x, m)
			if d.Outcome != tc.outcome || d.Reason != tc.reason || d.Canary != tc.canary || d.Seen.DoubtEnded != tc.ended {
				t.Fatalf("got %s %s canary %v ended %v, want %s %s %v %v (%s)", d.Outcome, d.Reason, d.Canary, d.Seen.DoubtEnded,
					tc.outcome, tc.reason, tc.canary, tc.ended, d.Message)
			}
			if d.Outcome == Hold && d.Reason.Kind() == policyv1alpha1.HoldKindDoubt && d.Seen.Doubt == nil {
				t.Error("a doubt hold must be remembered")
			}
		})
	}
}

// A node storm holds another namespace's hang no longer than maxHold, while a real node-wide
// failure is held until then.
func TestNodeStormIsBounded(t *testing.T) {
	nodeWide := func(f *Facts) {
		f.Workload.Pods = pods(10, 10, 1, 0) // the workload itself is fine but for this pod
		f.Node = NodeState{Name: "n1", Pods: 20, FailingPods: 20, FailingWorkloads: 5}
	}
	f, x := stormFacts()
	nodeWide(f)
	m := newFakeMemory()
	m.doubts = map[WorkloadKey]DoubtHold{}
	d := Decide(f, x, m)
	if d.Outcome != Hold || d.Reason != policyv1alpha1.HoldNodeStorm || d.Seen.Doubt == nil {
		t.Fatalf("every probe of the node failing: %s %s (%s)", d.Outcome, d.Reason, d.Message)
	}
	m.doubts[web] = *d.Seen.Doubt
	m.now = t0.Add(9 * time.Minute)
	if d = Decide(f, x, m); d.Outcome != Hold || d.Reason != policyv1alpha1.HoldNodeStorm {
		t.Fatalf("within maxHold: %s %s", d.Outcome, d.Reason)
	}
	m.doubts[web] = *d.Seen.Doubt
	m.now = t0.Add(10 * time.Minute)
	if d = Decide(f, x, m); d.Outcome != Restart || !d.Canary {
		t.Fatalf("after maxHold: %s %s (%s)", d.Outcome, d.Reason, d.Message)
	}
}

// A doubt hold is decided again when its canary is due (or its canary's deadline passes), not
// only at the decision controller's fallback recheck, so that maxHold is kept to the second.
func TestBoundDoubtDue(t *testing.T) {
	const maxHold = 10 * time.Minute
	canary := &Canary{Pod: "pod-1", Container: "app", Instance: "containerd://c", At: t0.Add(10 * time.Minute),
		Deadline: t0.Add(13 * time.Minute)}
	held := DoubtHold{Since: t0, Period: maxHold, Touched: t0.Add(9 * time.Minute)}
	withCanary := held
	withCanary.Canary = canary
	cases := []struct {
		name    string
		st      DoubtHold
		maxHold time.Duration
		now     time.Time
		due     time.Duration
	}{
		{"a new hold: due after maxHold", DoubtHold{}, maxHold, t0, maxHold},
		{"30 s before maxHold", held, maxHold, t0.Add(9*time.Minute + 30*time.Second), 30 * time.Second},
		{"a canary in flight: due at its deadline", withCanary, maxHold, t0.Add(11 * time.Minute), 2 * time.Minute},
		{"maxHold 0s: never due", held, 0, t0.Add(time.Hour), 0},
		{"released: nothing is due", held, maxHold, t0.Add(10 * time.Minute), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := BoundDoubt(tc.st, tc.st != (DoubtHold{}), tc.maxHold, func(Canary) CanaryResult { return CanaryPending }, tc.now)
			if got.Due != tc.due {
				t.Errorf("due %s, want %s (%s)", got.Due, tc.due, got.Message)
			}
		})
	}

	// Through Decide: a storm hold of the workload asks to be decided again when the canary is due.
	f, x := stormFacts()
	m := newFakeMemory()
	m.doubts = map[WorkloadKey]DoubtHold{web: {Since: t0.Add(-9 * time.Minute), Period: maxHold, Touched: t0.Add(-10 * time.Second)}}
	d := Decide(f, x, m)
	if d.Outcome != Hold || d.Reason != policyv1alpha1.HoldFailureStorm || d.RequeueAfter != time.Minute {
		t.Errorf("decision %s %s requeue %s, want a FailureStorm hold decided again in 1m0s", d.Outcome, d.Reason, d.RequeueAfter)
	}
}

// The default policy's maxHold is the manager's --default-max-hold: it bounds the doubt holds of
// a pod no policy selects.
func TestDefaultPolicyMaxHold(t *testing.T) {
	held := DoubtHold{Since: t0.Add(-30 * time.Minute), Period: 10 * time.Minute, Touched: t0.Add(-10 * time.Second)}
	cases := []struct {
		name    string
		maxHold *time.Duration
		want    time.Duration
		outcome Outcome
	}{
		{"flag not given: 10m, the canary goes after 30 min held", nil, DefaultMaxHold, Restart},
		{"1h: still held after 30 min", ptr.To(time.Hour), time.Hour, Hold},
		{"15m: the canary goes", ptr.To(15 * time.Minute), 15 * time.Minute, Restart},
		{"0s: held for ever", ptr.To(time.Duration(0)), 0, Hold},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			def := DefaultPolicy(Defaults{MaxUnavailable: intstr.FromString("25%"), MaxFailing: intstr.FromString("50%"),
				RestartsPerMinute: 6, Burst: 3, MaxHold: tc.maxHold})
			g := Governing(Select(nil, def, "ns", map[string]string{"app": "web"}))
			if h, by := g.MaxHold(); h != tc.want || by != DefaultPolicyKey("ns") {
				t.Fatalf("MaxHold() = %s by %s, want %s by the default policy", h, by, tc.want)
			}
			f, x := stormFacts()
			f.Policies = g
			m := newFakeMemory()
			m.doubts = map[WorkloadKey]DoubtHold{web: held}
			d := Decide(f, x, m)
			if d.Outcome != tc.outcome {
				t.Fatalf("got %s %s (%s), want %s", d.Outcome, d.Reason, d.Message, tc.outcome)
			}
			if tc.outcome == Hold && d.Reason != policyv1alpha1.HoldFailureStorm {
				t.Fatalf("held %s, want FailureStorm", d.Reason)
			}
		})
	}
}

func TestValidateMaxHold(t *testing.T) {
	for _, tc := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {time.Minute, true}, {24 * time.Hour, true}, {59 * time.Second, false}, {25 * time.Hour, false}, {-time.Minute, false}} {
		if err := ValidateMaxHold(tc.d); (err == nil) != tc.ok {
			t.Errorf("ValidateMaxHold(%s) = %v, want ok %v", tc.d, err, tc.ok)
		}
	}
	err := ValidateDefaults(Defaults{MaxUnavailable: intstr.FromInt32(1), MaxFailing: intstr.FromInt32(1), RestartsPerMinute: 1, Burst: 1,
		MaxHold: ptr.To(30 * time.Second)})
	if err == nil || err.Error() != "--default-max-hold: must be 0s (doubt holds never end) or between 1m and 24h, got 30s" {
		t.Errorf("ValidateDefaults: %v", err)
	}
}
