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

func TestFirstWait(t *testing.T) {
	for _, tc := range []struct {
		maxHold time.Duration
		failed  int32
		want    time.Duration
	}{
		{10 * time.Minute, 0, 30 * time.Second},
		{10 * time.Minute, 1, time.Minute},
		{10 * time.Minute, 2, 2 * time.Minute},
		{10 * time.Minute, 5, 10 * time.Minute},
		{10 * time.Minute, 100, 10 * time.Minute},
		{time.Minute, 3, time.Minute},
	} {
		if got := FirstWait(tc.maxHold, tc.failed); got != tc.want {
			t.Errorf("FirstWait(%s, %d) = %s, want %s", tc.maxHold, tc.failed, got, tc.want)
		}
	}
}

// The canary schedule: the first canary soon after the hold begins, the wait doubling after each
// canary that fails, maxHold the longest wait; one canary at a time; a canary that passed and has
// not failed again for the time that judges a restart releases the held pods for maxHold, and
// one that fails again after all ends the release.
func TestBoundDoubt(t *testing.T) {
	const maxHold = 10 * time.Minute
	storm := policyv1alpha1.HoldFailureStorm
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	canary := &Canary{Pod: "pod-1", PodName: "web-1", Container: "app", Instance: "containerd://c", At: at(30 * time.Second),
		Deadline: at(3 * time.Minute)}
	held := DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(20 * time.Second)}
	released := DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Released: at(time.Minute), Canaries: 1}
	const soon = 6 * time.Second
	withCanary := held
	withCanary.Canary, withCanary.Canaries, withCanary.Touched = canary, 1, at(30*time.Second)
	cases := []struct {
		name    string
		st      DoubtHold
		seen    bool
		reason  policyv1alpha1.HoldReason
		maxHold time.Duration
		failed  int32
		result  CanaryResult
		// notHelped is when a restart of the key found not to help was requested (nil: none).
		notHelped *time.Time
		now       time.Time
		release   bool
		canary    bool
		next      DoubtHold
	}{
		{"a new hold waits FirstCanaryWait for its first canary", DoubtHold{}, false, storm, maxHold, 0, CanaryPending, nil, t0, false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: t0}},
		{"a new hold after two restarts that did not help waits twice doubled", DoubtHold{}, false, policyv1alpha1.HoldRestartIneffective,
			maxHold, 2, CanaryPending, nil, t0, false, false,
			DoubtHold{Reason: policyv1alpha1.HoldRestartIneffective, Onset: t0, Since: t0, Period: 2 * time.Minute, Touched: t0}},
		{"held within the wait", held, true, storm, maxHold, 0, CanaryPending, nil, at(29 * time.Second), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(29 * time.Second)}},
		{"released as the canary after the wait", held, true, storm, maxHold, 0, CanaryPending, nil, at(30 * time.Second), true, true,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(30 * time.Second)}},
		{"another doubt rule of the key shares its hold", held, true, policyv1alpha1.HoldRestartIneffective, maxHold, 3, CanaryPending, nil,
			at(30 * time.Second), true, true,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(30 * time.Second)}},
		{"only one canary: the others wait for it", withCanary, true, storm, maxHold, 0, CanaryPending, nil, at(time.Minute), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(time.Minute), Canary: canary, Canaries: 1}},
		{"the canary passed: the others wait for the time that judges its restart", withCanary, true, storm, maxHold, 0, CanaryPassed, nil,
			at(time.Minute), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(time.Minute), Released: at(time.Minute), Canaries: 1}},
		{"it has not failed again for that time: the others are released", released, true, storm, maxHold, 0, CanaryPending, nil,
			at(time.Minute + soon), true, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(time.Minute + soon), Released: at(time.Minute), Canaries: 1}},
		{"released for maxHold after the canary passed", DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Released: at(time.Minute), Canaries: 1},
			true, storm, maxHold, 0, CanaryPending, nil, at(10*time.Minute + 59*time.Second), true, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(10*time.Minute + 59*time.Second), Released: at(time.Minute), Canaries: 1}},
		{"a doubt maxHold after the release is a new hold", DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Released: at(time.Minute), Canaries: 1},
			true, storm, maxHold, 0, CanaryPending, nil, at(11*time.Minute + soon), false, false,
			DoubtHold{Reason: storm, Onset: at(11*time.Minute + soon), Since: at(11*time.Minute + soon), Period: 30 * time.Second, Touched: at(11*time.Minute + soon)}},
		{"a maxHold shorter than the time that judges the canary still releases", DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Released: at(time.Minute), Canaries: 1},
			true, storm, 5 * time.Second, 0, CanaryPending, nil, at(time.Minute + soon), true, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 5 * time.Second, Touched: at(time.Minute + soon), Released: at(time.Minute), Canaries: 1}},
		{"a restart released since the wait began did not help: the release ends, the wait doubles", released, true, storm, maxHold, 0,
			CanaryPending, ptr.To(at(time.Minute + time.Second)), at(2 * time.Minute), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: at(2 * time.Minute), Period: time.Minute, Touched: at(2 * time.Minute), Canaries: 1}},
		{"the canary's restart passed, then failed again soon: the release ends", released, true, storm, maxHold, 0,
			CanaryPending, ptr.To(at(30 * time.Second)), at(time.Minute + 5*time.Second), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: at(time.Minute + 5*time.Second), Period: time.Minute, Touched: at(time.Minute + 5*time.Second), Canaries: 1}},
		{"a restart before the wait began that did not help: still released", released, true, storm, maxHold, 0,
			CanaryPending, ptr.To(t0.Add(-time.Second)), at(2 * time.Minute), true, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(2 * time.Minute), Released: at(time.Minute), Canaries: 1}},
		{"the canary failed: the wait doubles from now, the onset stays", withCanary, true, storm, maxHold, 0, CanaryFailed, nil, at(time.Minute), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: at(time.Minute), Period: time.Minute, Touched: at(time.Minute), Canaries: 1}},
		{"the doubled wait is capped at maxHold", DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Canary: canary, Canaries: 5},
			true, storm, maxHold, 0, CanaryFailed, nil, at(20 * time.Minute), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: at(20 * time.Minute), Period: maxHold, Touched: at(20 * time.Minute), Canaries: 5}},
		{"a lost canary lets another pod be the canary, the wait unchanged", withCanary, true, storm, maxHold, 0, CanaryLost, nil, at(time.Minute), true, true,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 30 * time.Second, Touched: at(time.Minute), Canaries: 1}},
		{"maxHold 0s: never released", held, true, storm, 0, 0, CanaryPending, nil, at(24 * time.Hour), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 0, Touched: at(24 * time.Hour)}},
		{"maxHold shortened: the wait with it", DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute}, true, storm, 2 * time.Minute, 0,
			CanaryPending, nil, at(time.Minute), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 2 * time.Minute, Touched: at(time.Minute)}},
		{"a budget hold of the key becomes a doubt: its waits start now",
			DoubtHold{Reason: policyv1alpha1.HoldMaxUnavailable, Onset: t0, Since: t0, Period: maxHold}, true, storm, maxHold, 0, CanaryPending, nil,
			at(9 * time.Minute), false, false,
			DoubtHold{Reason: storm, Onset: at(9 * time.Minute), Since: at(9 * time.Minute), Period: 30 * time.Second, Touched: at(9 * time.Minute)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			judged := 0
			judge := func(Canary) CanaryResult { judged++; return tc.result }
			notHelped := func(since time.Time) bool { return tc.notHelped != nil && !tc.notHelped.Before(since) }
			ev := CanaryEvidence{Judge: judge, NotHelped: notHelped, Soon: soon}
			got := BoundDoubt(tc.st, tc.seen, tc.reason, tc.maxHold, tc.failed, ev, tc.now)
			if got.Release != tc.release || got.Canary != tc.canary {
				t.Errorf("release %v canary %v, want %v %v (%s)", got.Release, got.Canary, tc.release, tc.canary, got.Message)
			}
			var provenAt time.Time // the time that judges a restart after the canary passed
			if !got.Next.Released.IsZero() && !got.Canary {
				provenAt = got.Next.Released.Add(soon)
			}
			if !got.ProvenAt.Equal(provenAt) || got.Release && !got.Canary && got.ProvenAt.After(tc.now) {
				t.Errorf("proven at %s, want %s, released %v at %s", got.ProvenAt, provenAt, got.Release, tc.now)
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

// An eviction is the key's canary: it waits while another canary is in flight (one pod of the
// key released at a time), never for the canary's turn, and takes the place.
func TestClaimCanary(t *testing.T) {
	const maxHold = 10 * time.Minute
	storm, ineffective := policyv1alpha1.HoldFailureStorm, policyv1alpha1.HoldRestartIneffective
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	canary := &Canary{Pod: "pod-1", PodName: "web-1", Container: "app", Instance: "containerd://c", At: at(30 * time.Second),
		Deadline: at(3 * time.Minute)}
	evicted := &Canary{Pod: "pod-2", PodName: "web-2", Container: "app", Instance: "containerd://e", Evicted: true,
		At: at(30 * time.Second), Deadline: at(2 * time.Minute)}
	held := DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute}
	inFlight := func(k *Canary) DoubtHold { h := held; h.Canary, h.Canaries = k, 1; return h }
	cases := []struct {
		name    string
		st      DoubtHold
		seen    bool
		result  CanaryResult
		now     time.Time
		release bool
		canary  bool
		next    DoubtHold
		message string
		// notHelped: a restart of the key since the wait began failed again soon (CanaryEvidence).
		notHelped bool
	}{
		{"no hold: one begins, the eviction its first canary", DoubtHold{}, false, CanaryPending, t0, true, true,
			DoubtHold{Reason: ineffective, Onset: t0, Since: t0, Period: 2 * time.Minute, Touched: t0}, "", false},
		{"a budget hold of the key: a doubt hold begins", DoubtHold{Reason: policyv1alpha1.HoldMaxUnavailable, Onset: t0, Since: t0, Period: maxHold},
			true, CanaryPending, at(time.Minute), true, true,
			DoubtHold{Reason: ineffective, Onset: at(time.Minute), Since: at(time.Minute), Period: 2 * time.Minute, Touched: at(time.Minute)}, "", false},
		{"a hold waiting for its next canary: the eviction does not wait", held, true, CanaryPending, at(time.Minute), true, true,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Touched: at(time.Minute)}, "", false},
		{"a canary restart in flight: the eviction waits for its verdict", inFlight(canary), true, CanaryPending, at(time.Minute), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Touched: at(time.Minute), Canary: canary, Canaries: 1},
			"held since 2026-11-30T12:00:00Z; container app of pod web-1 was restarted as canary 1 at 2026-11-30T12:00:30Z, waiting for its probe until 2026-11-30T12:03:00Z", false},
		{"another eviction in flight: this one waits for it", inFlight(evicted), true, CanaryPending, at(time.Minute), false, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Touched: at(time.Minute), Canary: evicted, Canaries: 1},
			"held since 2026-11-30T12:00:00Z; pod web-2 was evicted as canary 1 at 2026-11-30T12:00:30Z, waiting for it to go until 2026-11-30T12:02:00Z", false},
		{"the evicted canary is gone: the next eviction is the canary", inFlight(evicted), true, CanaryLost, at(time.Minute), true, true,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Touched: at(time.Minute), Canaries: 1}, "", false},
		{"the canary failed: the wait doubles, the eviction goes as the next canary", inFlight(canary), true, CanaryFailed, at(time.Minute), true, true,
			DoubtHold{Reason: storm, Onset: t0, Since: at(time.Minute), Period: maxHold, Touched: at(time.Minute), Canaries: 1}, "", false},
		{"the canary passed: released, the eviction no canary", inFlight(canary), true, CanaryPassed, at(time.Minute), true, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Touched: at(time.Minute), Released: at(time.Minute), Canaries: 1}, "", false},
		{"proven to help maxHold ago: the eviction is a canary again", DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Released: t0, Canaries: 1},
			true, CanaryPending, at(maxHold + 2*time.Minute), true, true,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Touched: at(maxHold + 2*time.Minute), Canaries: 1}, "", false},
		{"the canary passed, its restart not proven yet: the eviction goes, no canary, its pod being back",
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Released: at(time.Minute), Canaries: 1},
			true, CanaryPending, at(90 * time.Second), true, false,
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 8 * time.Minute, Touched: at(90 * time.Second), Released: at(time.Minute), Canaries: 1}, "", false},
		{"a restart since the wait began failed again soon: the release ends, the wait doubles, the eviction is the canary",
			DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: 4 * time.Minute, Released: at(time.Minute), Canaries: 1},
			true, CanaryPending, at(90 * time.Second), true, true,
			DoubtHold{Reason: storm, Onset: t0, Since: at(90 * time.Second), Period: 8 * time.Minute, Touched: at(90 * time.Second), Canaries: 1}, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := CanaryEvidence{Judge: func(Canary) CanaryResult { return tc.result }, Soon: 2 * time.Minute,
				NotHelped: func(since time.Time) bool { return tc.notHelped && !since.After(tc.now) }}
			got := ClaimCanary(tc.st, tc.seen, maxHold, 2, ev, tc.now)
			if got.Release != tc.release || got.Canary != tc.canary || got.Message != tc.message {
				t.Errorf("release %v canary %v (%q), want %v %v (%q)", got.Release, got.Canary, got.Message, tc.release, tc.canary, tc.message)
			}
			if !equalDoubt(got.Next, tc.next) {
				t.Errorf("next %+v, want %+v", got.Next, tc.next)
			}
			if !got.Release && got.Due != tc.st.Canary.Deadline.Sub(tc.now) {
				t.Errorf("due in %s, want at the canary's deadline", got.Due)
			}
		})
	}
}

func equalDoubt(a, b DoubtHold) bool {
	return a.Reason == b.Reason && a.Onset.Equal(b.Onset) && a.Since.Equal(b.Since) && a.Period == b.Period &&
		a.Touched.Equal(b.Touched) && a.Released.Equal(b.Released) && a.Canaries == b.Canaries &&
		(a.Canary == nil) == (b.Canary == nil) && (a.Canary == nil || *a.Canary == *b.Canary)
}

// A wrong probe costs one canary per wait, each wait twice the last, up to maxHold: the schedule
// through many failed canaries.
func TestCanaryScheduleOfAWrongProbe(t *testing.T) {
	const maxHold = 10 * time.Minute
	st, seen := DoubtHold{}, false
	now := t0
	var canaries []time.Duration
	for now.Before(t0.Add(time.Hour)) {
		step := BoundDoubt(st, seen, policyv1alpha1.HoldFailureStorm, maxHold, 0, CanaryEvidence{Judge: func(Canary) CanaryResult { return CanaryFailed }}, now)
		st, seen = step.Next, true
		if step.Canary {
			canaries = append(canaries, now.Sub(t0))
			// Its new container fails again 10 s later.
			st.Canary, st.Canaries = &Canary{Pod: "p", Container: "app", Deadline: now.Add(time.Hour)}, st.Canaries+1
			now = now.Add(10 * time.Second)
			continue
		}
		now = now.Add(time.Second)
	}
	// Waits of 30 s, 1, 2, 4, 8 min, then 10 min (maxHold), each counted from the previous
	// canary's failure.
	want := []time.Duration{30 * time.Second, 100 * time.Second, 230 * time.Second, 480 * time.Second, 970 * time.Second,
		1580 * time.Second, 2190 * time.Second, 2800 * time.Second, 3410 * time.Second}
	if len(canaries) != len(want) {
		t.Fatalf("canaries at %v, want %v", canaries, want)
	}
	for i := range want {
		if canaries[i] != want[i] {
			t.Fatalf("canaries at %v, want %v", canaries, want)
		}
	}
}

func TestJudgeCanary(t *testing.T) {
	k := Canary{Pod: "pod-1", Container: "app", Instance: "containerd://old", At: t0, Deadline: t0.Add(3 * time.Minute)}
	id := RestartID{Pod: "pod-1", Container: "app", Instance: "containerd://old", At: t0.Add(time.Second)}
	healthy := []PodState{{UID: "pod-0", Failing: true}, {UID: "pod-1", Ready: true, Healthy: true}}
	unprobed := []PodState{{UID: "pod-0", Failing: true}, {UID: "pod-1"}}
	sidecarFailing := []PodState{{UID: "pod-1", Ready: true, Failing: true, Containers: []ContainerState{
		{Name: "app", Healthy: true, Running: "containerd://new"}, {Name: "side", Failing: true, Running: "containerd://s"}}}}
	neverRan := []PodState{{UID: "pod-1", Ready: true, Failing: true, Containers: []ContainerState{
		{Name: "app", Failing: true, Running: "containerd://old"}}}}
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
		{"its container passes, a blacklisted sidecar of the pod fails: passed", sidecarFailing, []RestartRecord{{RestartID: id}}, nil,
			t0.Add(time.Minute), CanaryPassed},
		{"still being restarted", []PodState{{UID: "pod-1", Healthy: true, ActiveCRR: true}}, nil, nil, t0.Add(time.Minute), CanaryPending},
		{"new container failed soon after the restart, found now", unprobed, []RestartRecord{{RestartID: id}}, []RestartID{id}, t0.Add(time.Minute), CanaryFailed},
		{"new container failed soon after the restart, found before", healthy, []RestartRecord{{RestartID: id, Ineffective: true}}, nil, t0.Add(time.Minute), CanaryFailed},
		{"another restart's failure is not the canary's", unprobed, []RestartRecord{{RestartID: id}},
			[]RestartID{{Pod: "pod-0", Container: "app", Instance: "containerd://x"}}, t0.Add(time.Minute), CanaryPending},
		{"no pass by the deadline", unprobed, []RestartRecord{{RestartID: id}}, nil, t0.Add(4 * time.Minute), CanaryFailed},
		{"the restart never ran by the deadline (no daemon carried it out): lost, nothing learnt", neverRan,
			[]RestartRecord{{RestartID: id}}, nil, t0.Add(4 * time.Minute), CanaryLost},
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
	storm := policyv1alpha1.HoldFailureStorm
	due := DoubtHold{Reason: storm, Onset: t0.Add(-time.Minute), Since: t0.Add(-time.Minute), Period: 30 * time.Second, Touched: t0.Add(-10 * time.Second)}
	cases := []struct {
		name    string
		mutate  func(*Facts, *Failure, *fakeMemory)
		outcome Outcome
		reason  policyv1alpha1.HoldReason
		canary  bool
		touched bool // the key's hold is looked at (kept, or begun)
	}{
		{"a storm starts a hold", func(*Facts, *Failure, *fakeMemory) {}, Hold, storm, false, true},
		{"once its wait is over one pod goes as the canary", func(_ *Facts, _ *Failure, m *fakeMemory) { m.holds[webApp] = due },
			Restart, "", true, true},
		{"the canary is still rate limited", func(_ *Facts, _ *Failure, m *fakeMemory) { m.holds[webApp] = due; m.tokenWait = time.Second },
			Hold, policyv1alpha1.HoldRateLimited, false, true},
		{"the canary still needs budget", func(f *Facts, _ *Failure, m *fakeMemory) {
			m.holds[webApp] = due
			for i := 1; i <= 3; i++ {
				f.Workload.Pods[i].Ready = false
			}
		}, Hold, policyv1alpha1.HoldMaxUnavailable, false, true},
		{"the canary still waits for the pod's active restart", func(f *Facts, _ *Failure, m *fakeMemory) {
			m.holds[webApp] = due
			m.expected["pod-0"] = "web-0-app-0"
		}, Wait, "", false, false},
		{"another container's hold is not this one's", func(_ *Facts, _ *Failure, m *fakeMemory) {
			m.holds[HoldKey{Workload: web, Container: "side"}] = due
		}, Hold, storm, false, true},
		{"a node storm shares the key's hold", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Workload.Pods = pods(10, 10, 1, 0)
			f.Node = NodeState{Name: "n1", Pods: 10, FailingPods: 6, FailingWorkloads: 3}
			m.holds[webApp] = due
		}, Restart, "", true, true},
		{"released past a second doubt rule too", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Node = NodeState{Name: "n1", Pods: 10, FailingPods: 6, FailingWorkloads: 3}
			m.holds[webApp] = due
		}, Restart, "", true, true},
		{"a daemon not reporting is never released as a canary: no restart could run there", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Workload.Pods = pods(10, 10, 1, 0)
			f.Daemon.Reporting = false
			m.holds[webApp] = due
		}, Hold, policyv1alpha1.HoldDaemonNotReporting, false, false},
		{"maxHold 0s holds for ever", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Policies[0].MaxHold = 0
			m.holds[webApp] = DoubtHold{Reason: storm, Onset: t0.Add(-48 * time.Hour), Since: t0.Add(-48 * time.Hour), Touched: t0.Add(-10 * time.Second)}
		}, Hold, storm, false, true},
		{"a choice is never bounded", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.RestartDisabled = true
			m.holds[webApp] = due
		}, Hold, policyv1alpha1.HoldDisabled, false, false},
		{"a sibling past every doubt rule leaves the key's hold alone", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Workload.Pods = pods(10, 10, 1, 0)
			m.holds[webApp] = due
		}, Restart, "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, x := stormFacts()
			m := newFakeMemory()
			tc.mutate(f, &x, m)
			d := Decide(f, x, m)
			if d.Outcome != tc.outcome || d.Reason != tc.reason || d.Canary != tc.canary || (d.Seen.Hold != nil) != tc.touched {
				t.Fatalf("got %s %s canary %v touched %v, want %s %s %v %v (%s)", d.Outcome, d.Reason, d.Canary,
					d.Seen.Hold != nil, tc.outcome, tc.reason, tc.canary, tc.touched, d.Message)
			}
			if d.Key != webApp {
				t.Errorf("key %v, want %v", d.Key, webApp)
			}
		})
	}
}

// A node storm holds another namespace's hang no longer than its first wait, then it goes as its
// key's canary: each key has its own.
func TestNodeStormIsBounded(t *testing.T) {
	f, x := stormFacts()
	f.Workload.Pods = pods(10, 10, 1, 0) // the workload itself is fine but for this pod
	f.Node = NodeState{Name: "n1", Pods: 20, FailingPods: 20, FailingWorkloads: 5}
	m := newFakeMemory()
	d := Decide(f, x, m)
	if d.Outcome != Hold || d.Reason != policyv1alpha1.HoldNodeStorm || d.Seen.Hold == nil || d.Seen.Hold.Reason != policyv1alpha1.HoldNodeStorm {
		t.Fatalf("every probe of the node failing: %s %s (%s)", d.Outcome, d.Reason, d.Message)
	}
	m.holds[webApp] = *d.Seen.Hold
	m.now = t0.Add(29 * time.Second)
	if d = Decide(f, x, m); d.Outcome != Hold || d.Reason != policyv1alpha1.HoldNodeStorm {
		t.Fatalf("within the first wait: %s %s", d.Outcome, d.Reason)
	}
	m.holds[webApp] = *d.Seen.Hold
	m.now = t0.Add(30 * time.Second)
	if d = Decide(f, x, m); d.Outcome != Restart || !d.Canary {
		t.Fatalf("after the first wait: %s %s (%s)", d.Outcome, d.Reason, d.Message)
	}
}

// A doubt hold is decided again when its canary is due (or its canary's deadline passes), not
// only at the decision controller's fallback recheck, so that its schedule is kept to the second.
func TestBoundDoubtDue(t *testing.T) {
	const maxHold = 10 * time.Minute
	storm := policyv1alpha1.HoldFailureStorm
	canary := &Canary{Pod: "pod-1", Container: "app", Instance: "containerd://c", At: t0.Add(time.Minute), Deadline: t0.Add(3 * time.Minute)}
	held := DoubtHold{Reason: storm, Onset: t0, Since: t0, Period: time.Minute, Touched: t0.Add(50 * time.Second)}
	withCanary := held
	withCanary.Canary = canary
	cases := []struct {
		name    string
		st      DoubtHold
		maxHold time.Duration
		now     time.Time
		due     time.Duration
	}{
		{"a new hold: due after its first wait", DoubtHold{}, maxHold, t0, FirstCanaryWait},
		{"30 s before the wait ends", held, maxHold, t0.Add(30 * time.Second), 30 * time.Second},
		{"a canary in flight: due at its deadline", withCanary, maxHold, t0.Add(2 * time.Minute), time.Minute},
		{"maxHold 0s: never due", held, 0, t0.Add(time.Hour), 0},
		{"released: nothing is due", held, maxHold, t0.Add(time.Minute), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := BoundDoubt(tc.st, tc.st != (DoubtHold{}), storm, tc.maxHold, 0, CanaryEvidence{Judge: func(Canary) CanaryResult { return CanaryPending }}, tc.now)
			if got.Due != tc.due {
				t.Errorf("due %s, want %s (%s)", got.Due, tc.due, got.Message)
			}
		})
	}

	// Through Decide: a storm hold of the key asks to be decided again when the canary is due.
	f, x := stormFacts()
	m := newFakeMemory()
	m.holds[webApp] = DoubtHold{Reason: storm, Onset: t0.Add(-20 * time.Second), Since: t0.Add(-20 * time.Second), Period: 30 * time.Second}
	d := Decide(f, x, m)
	if d.Outcome != Hold || d.Reason != storm || d.RequeueAfter != 10*time.Second {
		t.Errorf("decision %s %s requeue %s, want a FailureStorm hold decided again in 10s", d.Outcome, d.Reason, d.RequeueAfter)
	}
}

// The default policy's maxHold is the manager's --default-max-hold: the longest wait between two
// canaries of a pod no policy selects.
func TestDefaultPolicyMaxHold(t *testing.T) {
	// Canary 5 has just failed after a wait of 8 minutes.
	failed := DoubtHold{Reason: policyv1alpha1.HoldFailureStorm, Onset: t0.Add(-30 * time.Minute), Since: t0.Add(-10 * time.Minute),
		Period: 8 * time.Minute, Canaries: 5, Canary: &Canary{Pod: "pod-3", Container: "app", Instance: "containerd://x",
			At: t0.Add(-2 * time.Minute), Deadline: t0.Add(time.Minute)}}
	cases := []struct {
		name     string
		maxHold  *time.Duration
		want     time.Duration
		nextWait time.Duration
	}{
		{"flag not given: 10m, the wait stops doubling at 10 minutes", nil, DefaultMaxHold, 10 * time.Minute},
		{"1h: it doubles to 16 minutes", ptr.To(time.Hour), time.Hour, 16 * time.Minute},
		{"15m: 15 minutes", ptr.To(15 * time.Minute), 15 * time.Minute, 15 * time.Minute},
		{"0s: held for ever", ptr.To(time.Duration(0)), 0, 0},
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
			f.Refailures = []Refailure{{Pod: "pod-3", Container: "app", ContainerID: "containerd://y", Started: t0.Add(-time.Minute), FailedAt: t0}}
			m := newFakeMemory()
			m.holds[webApp] = failed
			m.restarts = []RestartRecord{{RestartID: RestartID{Pod: "pod-3", Container: "app", Instance: "containerd://x", At: t0.Add(-2 * time.Minute)},
				Soon: time.Minute}}
			d := Decide(f, x, m)
			if d.Outcome != Hold || d.Reason != policyv1alpha1.HoldFailureStorm || d.Seen.Hold == nil {
				t.Fatalf("got %s %s (%s), want a FailureStorm hold", d.Outcome, d.Reason, d.Message)
			}
			if got := d.Seen.Hold.Period; got != tc.nextWait {
				t.Fatalf("next wait %s, want %s (%s)", got, tc.nextWait, d.Message)
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
