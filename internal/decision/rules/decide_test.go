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
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// fakeMemory is the decision's memory as the rules read it.
type fakeMemory struct {
	now           time.Time
	expected      map[types.UID]string
	held          map[Instance]HeldRecord
	lastStorm     map[HoldKey]time.Time
	stormOnset    time.Time // of every key's storm
	lastNodeStorm map[string]time.Time
	restarts      []RestartRecord
	tokenWait     time.Duration
	holds         map[HoldKey]DoubtHold
	firstSeen     map[Instance]time.Time
	evictions     map[types.UID]EvictionRecord
}

func newFakeMemory() *fakeMemory {
	return &fakeMemory{now: t0, expected: map[types.UID]string{}, held: map[Instance]HeldRecord{},
		lastStorm: map[HoldKey]time.Time{}, lastNodeStorm: map[string]time.Time{},
		holds: map[HoldKey]DoubtHold{}}
}

func (m *fakeMemory) Now() time.Time { return m.now }
func (m *fakeMemory) Expected(pod types.UID) (string, bool) {
	n, ok := m.expected[pod]
	return n, ok
}
func (m *fakeMemory) Held(_ types.NamespacedName, i Instance) (HeldRecord, bool) {
	r, ok := m.held[i]
	return r, ok
}
func (m *fakeMemory) LastStorm(k HoldKey) (time.Time, bool) {
	t, ok := m.lastStorm[k]
	return t, ok
}
func (m *fakeMemory) StormOnset(HoldKey) time.Time { return m.stormOnset }
func (m *fakeMemory) LastNodeStorm(n string) (time.Time, bool) {
	t, ok := m.lastNodeStorm[n]
	return t, ok
}
func (m *fakeMemory) Restarts(WorkloadKey) []RestartRecord      { return m.restarts }
func (m *fakeMemory) TokenWait(string, Governing) time.Duration { return m.tokenWait }
func (m *fakeMemory) FirstSeen(_ types.NamespacedName, i Instance) (time.Time, bool) {
	t, ok := m.firstSeen[i]
	return t, ok
}
func (m *fakeMemory) Eviction(pod types.UID) (EvictionRecord, bool) {
	e, ok := m.evictions[pod]
	return e, ok
}
func (m *fakeMemory) Hold(k HoldKey) (DoubtHold, bool) {
	d, ok := m.holds[k]
	return d, ok
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

var web = WorkloadKey{Namespace: "ns", Group: "apps", Kind: "Deployment", Name: "web"}

// webApp is the key of web's app container, the one baseFacts' failure is of.
var webApp = HoldKey{Workload: web, Container: "app"}

// baseFacts is a healthy 10-replica workload where one pod's container failed: everything allows
// the restart. Each case changes one fact (or what the memory remembers) and expects the rule of
// that step to answer.
func baseFacts() (*Facts, Failure) {
	pol := Policy{Key: PolicyKey{Namespace: "ns", Name: "p"}, MaxUnavailable: ptr.To(intstr.FromString("25%")), MaxFailing: intstr.FromString("50%"), Rate: Rate{PerMinute: 6, Burst: 3}, Breaker: DefaultRestartBreaker}
	f := &Facts{
		Pod: types.NamespacedName{Namespace: "ns", Name: "web-0"}, UID: "pod-0", Found: true,
		Daemon:   Daemon{Reporting: true},
		Policies: Governing{pol},
		Workload: WorkloadState{Ref: WorkloadRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, Desired: 10, Pods: pods(10, 10, 1, 0)},
		Self:     PodState{UID: "pod-0", Ready: true, Failing: true},
		Node:     NodeState{Name: "n1", Pods: 10, FailingPods: 1, FailingWorkloads: 1},
		Settings: Settings{RestartsEnabled: true, NodeStorm: NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 3},
			StormSettle: 30 * time.Second},
	}
	x := Failure{Probe: "web-0-app", Container: "app", ContainerID: "containerd://a", Running: "containerd://a", Request: "web-0-app-1"}
	return f, x
}

// restarted remembers n restarts of the workload made just now, ineffective of them not helping.
func restarted(n, ineffective int) []RestartRecord {
	out := make([]RestartRecord, n)
	for i := range out {
		out[i] = RestartRecord{RestartID: RestartID{Pod: types.UID(fmt.Sprint("old-", i)), Container: "app", At: t0}, Ineffective: i < ineffective}
	}
	return out
}

func TestDecideInOrder(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*Facts, *Failure, *fakeMemory)
		outcome Outcome
		reason  policyv1alpha1.HoldReason
	}{
		{"everything allows", func(*Facts, *Failure, *fakeMemory) {}, Restart, ""},
		{"pod gone", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Found = false }, Ignore, ""},
		{"pod terminating", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Terminating = true }, Ignore, ""},
		{"stale containerID", func(_ *Facts, x *Failure, _ *fakeMemory) { x.Running = "containerd://b" }, Ignore, ""},
		{"container not running", func(_ *Facts, x *Failure, _ *fakeMemory) { x.Running = "" }, Ignore, ""},
		{"stale beats lease", func(f *Facts, x *Failure, _ *fakeMemory) { x.Running = "containerd://b"; f.Daemon.Reporting = false }, Ignore, ""},
		{"lease expired", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Daemon.Reporting = false }, Hold, policyv1alpha1.HoldDaemonNotReporting},
		{"result taken before the daemon's start", func(f *Facts, x *Failure, _ *fakeMemory) {
			x.ProbeTime, f.Daemon.Started, f.Daemon.Renewed = t0.Add(-time.Second), t0, t0.Add(5*time.Second)
		}, Hold, policyv1alpha1.HoldDaemonNotReporting},
		{"result no longer refreshed", func(f *Facts, x *Failure, _ *fakeMemory) {
			// period 10 s: stale after 2*20 s + 2*10 s = 60 s
			x.Period, f.Daemon.Started, x.ProbeTime, f.Daemon.Renewed = 10, t0, t0.Add(time.Minute), t0.Add(2*time.Minute+time.Second)
		}, Hold, policyv1alpha1.HoldDaemonNotReporting},
		{"result refreshed in time", func(f *Facts, x *Failure, _ *fakeMemory) {
			x.Period, f.Daemon.Started, x.ProbeTime, f.Daemon.Renewed = 10, t0, t0.Add(time.Minute), t0.Add(2*time.Minute)
		}, Restart, ""},
		{"a probe whose runs outlast its period is refreshed as often as they end", func(f *Facts, x *Failure, _ *fakeMemory) {
			// period 10 s, timeout 60 s: one timed-out run a minute; stale after 2*120 s + 2*10 s = 260 s
			x.Period, x.Timeout, f.Daemon.Started, x.ProbeTime, f.Daemon.Renewed = 10, 60, t0, t0.Add(time.Minute), t0.Add(5*time.Minute)
		}, Restart, ""},
		{"a probe whose runs outlast its period, no longer refreshed", func(f *Facts, x *Failure, _ *fakeMemory) {
			x.Period, x.Timeout, f.Daemon.Started, x.ProbeTime, f.Daemon.Renewed = 10, 60, t0, t0.Add(time.Minute), t0.Add(5*time.Minute+21*time.Second)
		}, Hold, policyv1alpha1.HoldDaemonNotReporting},
		{"stale evidence comes after the lease", func(f *Facts, x *Failure, _ *fakeMemory) {
			f.Daemon.Reporting, x.ProbeTime, f.Daemon.Started = false, t0.Add(-time.Second), t0
		}, Hold, policyv1alpha1.HoldDaemonNotReporting},
		{"stale evidence before the switches", func(f *Facts, x *Failure, _ *fakeMemory) {
			x.ProbeTime, f.Daemon.Started, f.RestartDisabled = t0.Add(-time.Second), t0, true
		}, Hold, policyv1alpha1.HoldDaemonNotReporting},
		{"pod switch", func(f *Facts, _ *Failure, _ *fakeMemory) { f.RestartDisabled = true }, Hold, policyv1alpha1.HoldDisabled},
		{"manager switch", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Settings.RestartsEnabled = false }, Hold, policyv1alpha1.HoldDisabled},
		{"pod admitted in Shadow", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Shadow = true }, Hold, policyv1alpha1.HoldShadow},
		{"pod admitted in Enforce, its policy in Shadow now: restarted", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Policies[0].Shadow = true
		}, Restart, ""},
		{"switch before Shadow", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Shadow, f.RestartDisabled = true, true }, Hold, policyv1alpha1.HoldDisabled},
		{"Shadow before blacklist", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Shadow = true
			f.Policies[0].Blacklist = Blacklist{containers: map[string]struct{}{"app": {}}}
		}, Hold, policyv1alpha1.HoldShadow},
		{"switch before blacklist", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.RestartDisabled = true
			f.Policies[0].Blacklist = Blacklist{containers: map[string]struct{}{"app": {}}}
		}, Hold, policyv1alpha1.HoldDisabled},
		{"blacklist", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Policies[0].Blacklist = Blacklist{containers: map[string]struct{}{"app": {}}}
		}, Hold, policyv1alpha1.HoldBlacklisted},
		{"blacklist before active CRR", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Policies[0].Blacklist = Blacklist{containers: map[string]struct{}{"app": {}}}
			f.Self.ActiveCRR = true
		}, Hold, policyv1alpha1.HoldBlacklisted},
		{"active CRR waits", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Self.ActiveCRR = true }, Wait, ""},
		{"a request the memory expects waits", func(_ *Facts, _ *Failure, m *fakeMemory) { m.expected["pod-0"] = "web-0-app-1" }, Wait, ""},
		{"an expected request the cache shows finished does not", func(f *Facts, _ *Failure, m *fakeMemory) {
			m.expected["pod-0"] = "web-0-app-1"
			f.Self.Finished = []string{"web-0-app-1"}
		}, Restart, ""},
		{"active CRR before storm", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Self.ActiveCRR = true
			f.Workload.Pods = pods(10, 10, 6, 0)
		}, Wait, ""},
		{"5 of 10 failing: no storm", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Workload.Pods = pods(10, 10, 5, 0) }, Restart, ""},
		{"6 of 10 failing: storm", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Workload.Pods = pods(10, 10, 6, 0) }, Hold, policyv1alpha1.HoldFailureStorm},
		{"1 failing and 5 starting to fail of 10: storm before the others reach their threshold", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Workload.Pods = suspects(pods(10, 10, 1, 0), 5)
		}, Hold, policyv1alpha1.HoldFailureStorm},
		{"1 failing and 4 starting to fail of 10: no storm", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Workload.Pods = suspects(pods(10, 10, 1, 0), 4)
		}, Restart, ""},
		{"a new revision of 3 pods failing or starting to fail, in a workload of 10: storm", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Workload.Pods = revision(suspects(pods(10, 10, 1, 0), 2), 3, "rs-new")
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Hold, policyv1alpha1.HoldFailureStorm},
		{"the only pod of a new revision fails: no storm", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Workload.Pods = revision(pods(10, 10, 1, 0), 1, "rs-new")
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Restart, ""},
		{"a rollout: 2 new pods failing or starting to fail, the other 8 not probed yet: storm", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Workload.Pods = unprobed(revision(suspects(pods(10, 10, 1, 0), 1), 10, "rs-new"), 2)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Hold, policyv1alpha1.HoldFailureStorm},
		{"a rollout: the first new pod fails, the others not probed yet: wait for their first results", func(f *Facts, x *Failure, m *fakeMemory) {
			f.Workload.Pods = unprobed(revision(pods(10, 10, 1, 0), 10, "rs-new"), 1)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
			x.Period, m.firstSeen = 1, map[Instance]time.Time{x.Instance(): t0.Add(-9 * time.Second)}
		}, Wait, ""},
		{"a rollout: the first new pod fails, the others still not probed after the wait: restart", func(f *Facts, x *Failure, m *fakeMemory) {
			f.Workload.Pods = unprobed(revision(pods(10, 10, 1, 0), 10, "rs-new"), 1)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
			x.Period, m.firstSeen = 1, map[Instance]time.Time{x.Instance(): t0.Add(-10 * time.Second)}
		}, Restart, ""},
		{"the revision wait is on the manager's clock: a node clock 5 minutes ahead does not end it", func(f *Facts, x *Failure, m *fakeMemory) {
			f.Workload.Pods = unprobed(revision(pods(10, 10, 1, 0), 10, "rs-new"), 1)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
			x.Period, x.Since = 1, t0.Add(-5*time.Minute)
		}, Wait, ""},
		{"the revision wait is on the manager's clock: a node clock 5 minutes behind does not stretch it", func(f *Facts, x *Failure, m *fakeMemory) {
			f.Workload.Pods = unprobed(revision(pods(10, 10, 1, 0), 10, "rs-new"), 1)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
			x.Period, x.Since = 1, t0.Add(5*time.Minute)
			m.firstSeen = map[Instance]time.Time{x.Instance(): t0.Add(-10 * time.Second)}
		}, Restart, ""},
		{"a new revision whose other pod passed its probe: no wait for the unprobed ones", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Workload.Pods = unprobed(revision(pods(10, 10, 1, 0), 10, "rs-new"), 2)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Restart, ""},
		{"1 of a new revision of 3 failing, the rest healthy: no storm", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Workload.Pods = revision(pods(10, 10, 1, 0), 3, "rs-new")
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Restart, ""},
		{"storm holds even an unavailable pod", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Workload.Pods = pods(10, 4, 6, 0)
			f.Self.Ready = false
		}, Hold, policyv1alpha1.HoldFailureStorm},
		{"restarts that do not help", func(_ *Facts, _ *Failure, m *fakeMemory) { m.restarts = restarted(2, 2) }, Hold, policyv1alpha1.HoldRestartIneffective},
		{"restarts that mostly helped", func(_ *Facts, _ *Failure, m *fakeMemory) { m.restarts = restarted(5, 2) }, Restart, ""},
		{"restarts that did not help, out of the window", func(_ *Facts, _ *Failure, m *fakeMemory) {
			m.restarts = restarted(2, 2)
			m.now = t0.Add(11 * time.Minute)
		}, Restart, ""},
		{"the breaker of a policy that disables it", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Policies[0].Breaker.Enabled = false
			m.restarts = restarted(2, 2)
		}, Restart, ""},
		{"storm before ineffective restarts", func(f *Facts, _ *Failure, m *fakeMemory) {
			m.restarts = restarted(2, 2)
			f.Workload.Pods = pods(10, 10, 6, 0)
		}, Hold, policyv1alpha1.HoldFailureStorm},
		{"node storm", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Node = NodeState{Name: "n1", Pods: 10, FailingPods: 6, FailingWorkloads: 4}
		}, Hold, policyv1alpha1.HoldNodeStorm},
		{"5 of 10 failing right after a storm: still settling", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Workload.Pods = pods(10, 10, 5, 0)
			m.lastStorm[webApp] = t0.Add(-18 * time.Second) // 12 s of the 30 s left
		}, Hold, policyv1alpha1.HoldFailureStorm},
		{"a storm that has settled", func(_ *Facts, _ *Failure, m *fakeMemory) { m.lastStorm[webApp] = t0.Add(-30 * time.Second) }, Restart, ""},
		{"node storm settling", func(_ *Facts, _ *Failure, m *fakeMemory) { m.lastNodeStorm["n1"] = t0.Add(-29 * time.Second) }, Hold, policyv1alpha1.HoldNodeStorm},
		{"settling comes after the switches", func(f *Facts, _ *Failure, m *fakeMemory) {
			m.lastStorm[webApp] = t0.Add(-29 * time.Second)
			f.RestartDisabled = true
		}, Hold, policyv1alpha1.HoldDisabled},
		{"no settling when it is off", func(f *Facts, _ *Failure, m *fakeMemory) {
			m.lastStorm[webApp] = t0
			f.Settings.StormSettle = 0
		}, Restart, ""},
		{"budget: 2 of 3 unavailable allows", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Workload.Pods = pods(10, 10, 3, 2) }, Restart, ""},
		{"budget: 3 of 3 unavailable holds", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Workload.Pods = pods(10, 10, 4, 3) }, Hold, policyv1alpha1.HoldMaxUnavailable},
		{"budget: a sibling's request the memory expects is unavailable", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Workload.Pods = pods(10, 10, 4, 2)
			f.Workload.Pods[2].UID = "sibling"
			m.expected["sibling"] = "sibling-app-1"
		}, Hold, policyv1alpha1.HoldMaxUnavailable},
		{"budget: unavailable pod may always restart", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Workload.Pods = pods(10, 6, 4, 0)
			f.Self.Ready = false
		}, Restart, ""},
		{"budget: most restrictive policy", func(f *Facts, _ *Failure, _ *fakeMemory) {
			f.Policies = append(f.Policies, Policy{Key: PolicyKey{Namespace: "ns", Name: "strict"}, MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxFailing: intstr.FromString("50%"), Rate: Rate{PerMinute: 6, Burst: 3}})
			f.Workload.Pods = pods(10, 10, 2, 1)
		}, Hold, policyv1alpha1.HoldMaxUnavailable},
		{"budget: maxUnavailable 0", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Policies[0].MaxUnavailable = ptr.To(intstr.FromInt32(0)) }, Hold, policyv1alpha1.HoldMaxUnavailable},
		{"rate limit", func(_ *Facts, _ *Failure, m *fakeMemory) { m.tokenWait = 10 * time.Second }, Hold, policyv1alpha1.HoldRateLimited},
		{"budget before the rate limit", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Policies[0].MaxUnavailable = ptr.To(intstr.FromInt32(0))
			m.tokenWait = 10 * time.Second
		}, Hold, policyv1alpha1.HoldMaxUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, x := baseFacts()
			f.Policies = append(Governing(nil), f.Policies...)
			m := newFakeMemory()
			c.mutate(f, &x, m)
			d := Decide(f, x, m)
			if d.Outcome != c.outcome || d.Reason != c.reason {
				t.Fatalf("got %s/%s (%s), want %s/%s", d.Outcome, d.Reason, d.Message, c.outcome, c.reason)
			}
			if d.Outcome == Hold && d.Message == "" {
				t.Fatal("a hold must say why")
			}
			if d.Reason == policyv1alpha1.HoldRateLimited && d.RequeueAfter != m.tokenWait {
				t.Fatalf("a rate-limited restart is decided again when the next token is due: %s", d.RequeueAfter)
			}
		})
	}
}

func TestStaleNeedsOnlyThePodAndTheResult(t *testing.T) {
	// Only the pod and the result are set: the lease, policies and workload are not known yet.
	fresh := Failure{ContainerID: "containerd://a", Running: "containerd://a"}
	if _, stale := Stale(&Facts{Found: true}, fresh); stale {
		t.Fatal("a result for the running container is not stale")
	}
	for name, c := range map[string]struct {
		f Facts
		x Failure
	}{
		"gone":        {Facts{}, fresh},
		"terminating": {Facts{Found: true, Terminating: true}, fresh},
		"replaced":    {Facts{Found: true}, Failure{ContainerID: "containerd://a", Running: "containerd://b"}},
		"not running": {Facts{Found: true}, Failure{ContainerID: "containerd://a"}},
	} {
		if v, stale := Stale(&c.f, c.x); !stale || v.Outcome != Ignore {
			t.Errorf("%s: want Ignore, got %v %s", name, stale, v.Outcome)
		}
		if d := Decide(&c.f, c.x, newFakeMemory()); d.Outcome != Ignore || d.Seen.At != (time.Time{}) {
			t.Errorf("%s: Decide = %s, seen %+v: a stale result is ignored, and nothing of it is kept", name, d.Outcome, d.Seen)
		}
	}
}

// A hold is counted once per instance and reason, and told in an event when it starts and again
// every HoldEventInterval while it lasts.
func TestNewHold(t *testing.T) {
	since := t0.Add(-time.Hour)
	for _, c := range []struct {
		name      string
		held      HeldRecord // zero when the instance was not held
		want      bool
		announce  bool
		heldSince time.Time
	}{
		{"a new instance is a transition", HeldRecord{}, true, true, t0},
		{"the same reason again is no transition", HeldRecord{Reason: policyv1alpha1.HoldShadow, Since: since, Announced: t0.Add(-4 * time.Minute)},
			false, false, since},
		{"the same reason is told again after 5 minutes", HeldRecord{Reason: policyv1alpha1.HoldShadow, Since: since, Announced: t0.Add(-5 * time.Minute)},
			false, true, since},
		{"a new reason is a transition", HeldRecord{Reason: policyv1alpha1.HoldMaxUnavailable, Since: since, Announced: t0}, true, true, t0},
	} {
		f, x := baseFacts()
		f.Shadow = true
		m := newFakeMemory()
		if c.held.Reason != "" {
			m.held[x.Instance()] = c.held
		}
		d := Decide(f, x, m)
		if d.Held != c.held.Reason || d.NewHold != c.want || d.Announce != c.announce || !d.HeldSince.Equal(c.heldSince) {
			t.Errorf("%s: held %q, NewHold = %v, Announce = %v, since %s; want %v %v %s", c.name, d.Held, d.NewHold, d.Announce, d.HeldSince,
				c.want, c.announce, c.heldSince)
		}
	}
}

// What a decision sees is kept whichever rule answers: storms move their settle timers, a
// restart found not to have helped is marked, an expected request seen finished ends.
func TestDecideSeesWhateverTheVerdict(t *testing.T) {
	f, x := baseFacts()
	f.Shadow = true // the switch answers first
	f.Workload.Pods = pods(10, 10, 6, 0)
	f.Node = NodeState{Name: "n1", Pods: 10, FailingPods: 6, FailingWorkloads: 4}
	f.Workload.Pods[3].UID, f.Workload.Pods[3].Finished = "sibling", []string{"old-request"}
	f.Refailures = []Refailure{{Pod: "p1", Container: "app", ContainerID: "c://p1-2", Started: t0.Add(-20 * time.Second), FailedAt: t0}}
	m := newFakeMemory()
	m.expected["sibling"] = "old-request"
	m.restarts = []RestartRecord{{RestartID: RestartID{Pod: "p1", Container: "app", Instance: "c://p1-1", At: t0.Add(-30 * time.Second)}, Soon: time.Minute}}
	d := Decide(f, x, m)
	if d.Reason != policyv1alpha1.HoldShadow {
		t.Fatalf("decided %s/%s", d.Outcome, d.Reason)
	}
	want := Seen{At: t0, WorkloadStorm: StormSeen, NodeStorm: StormSeen,
		Ineffective: []RestartID{m.restarts[0].RestartID},
		Finished:    []ExpectedRequest{{Pod: "sibling", Name: "old-request"}}}
	if d.Seen.At != want.At || d.Seen.WorkloadStorm != want.WorkloadStorm || d.Seen.NodeStorm != want.NodeStorm ||
		len(d.Seen.Ineffective) != 1 || d.Seen.Ineffective[0] != want.Ineffective[0] ||
		len(d.Seen.Finished) != 1 || d.Seen.Finished[0] != want.Finished[0] {
		t.Fatalf("seen %+v, want %+v", d.Seen, want)
	}
	if d.Workload != web || len(d.Policies) != 1 || len(d.StatusPolicies) != 1 || d.Soon != SoonAfterRestart(0, 0, 0) {
		t.Fatalf("the decision names its workload and policies: %v %v %v %s", d.Workload, d.Policies, d.StatusPolicies, d.Soon)
	}
}

// suspects marks n pods that are not failing as having started to fail.
func suspects(ps []PodState, n int) []PodState {
	for i := range ps {
		if n > 0 && !ps[i].Failing {
			ps[i].Suspect, ps[i].Healthy = true, false
			n--
		}
	}
	return ps
}

// unprobed marks the pods from index from on as not probed yet (neither failing nor healthy).
func unprobed(ps []PodState, from int) []PodState {
	for i := from; i < len(ps); i++ {
		ps[i].Healthy = false
	}
	return ps
}

// revision puts the first n pods (the failing ones first) under the controller uid.
func revision(ps []PodState, n int, uid types.UID) []PodState {
	for i := 0; i < n && i < len(ps); i++ {
		ps[i].Controller = uid
	}
	return ps
}

// A Shadow pod's hold names the policy that keeps it in Shadow, or, when none does any more,
// says that the pod keeps the mode it was admitted in and how to change it.
func TestShadowHoldMessage(t *testing.T) {
	f, x := baseFacts()
	f.Shadow = true
	f.Policies[0].Shadow = true
	d := Decide(f, x, newFakeMemory())
	if want := "would restart container app; the pod is in Shadow mode (policy ns/p)"; d.Reason != policyv1alpha1.HoldShadow ||
		!strings.HasPrefix(d.Message, want) {
		t.Fatalf("%s: %q, want %q...", d.Reason, d.Message, want)
	}
	f.Policies[0].Shadow = false
	d = Decide(f, x, newFakeMemory())
	if d.Reason != policyv1alpha1.HoldShadow || !strings.Contains(d.Message, "no policy governing it says Shadow now") ||
		!strings.Contains(d.Message, "kubectl rollout restart") {
		t.Fatalf("%s: %q", d.Reason, d.Message)
	}
}
