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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// A pod whose own restarts do not help is evicted instead of held when its policy says Evict and
// its container passes on another node, on the restart's budget path; otherwise it stays held.
func TestEvictInsteadOfHold(t *testing.T) {
	evicting := RestartBreaker{Enabled: true, MinIneffective: 2, Window: 10 * time.Minute, Evict: true}
	own := func(pod types.UID, n int) []RestartRecord {
		out := make([]RestartRecord, n)
		for i := range out {
			out[i] = RestartRecord{RestartID: RestartID{Pod: pod, Container: "app", Instance: fmt.Sprint("c-", i),
				At: t0.Add(-time.Duration(n-i) * time.Minute)}, Ineffective: true}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		mutate  func(*Facts, *fakeMemory)
		outcome Outcome
		reason  policyv1alpha1.HoldReason
		message string
	}{
		{"Evict, the container passes on another node: evicted", func(*Facts, *fakeMemory) {}, Evict, "",
			"while container app passes in 1 pod(s) of Deployment/web on other nodes: evicting it"},
		// The eviction is the key's canary: with another pod's canary restart in flight it waits
		// for that canary's verdict rather than release a second pod of the key beside it.
		{"a canary restart of another pod of the key in flight: held, the eviction waits for it", func(f *Facts, m *fakeMemory) {
			f.Workload.Pods[1].UID, f.Workload.Pods[1].Recovering = "pod-1", true
			m.holds[webApp] = DoubtHold{Reason: policyv1alpha1.HoldFailureStorm, Onset: t0.Add(-time.Minute), Since: t0.Add(-time.Minute),
				Period: 8 * time.Minute, Canaries: 1, Canary: &Canary{Pod: "pod-1", PodName: "web-1", Container: "app",
					Instance: "containerd://web-1-app-1", At: t0.Add(-30 * time.Second), Deadline: t0.Add(2 * time.Minute)}}
		}, Hold, policyv1alpha1.HoldRestartIneffective,
			"restarting it is not helping (policy ns/p); its eviction waits for the canary in flight"},
		{"Hold (the default): held", func(f *Facts, _ *fakeMemory) { f.Policies[0].Breaker.Evict = false },
			Hold, policyv1alpha1.HoldRestartIneffective, "restarting it is not helping (policy ns/p)"},
		{"no sibling passes elsewhere: held, and said why", func(f *Facts, _ *fakeMemory) { f.Elsewhere = nil },
			Hold, policyv1alpha1.HoldRestartIneffective, "not evicted: no pod of Deployment/web passes container app on another node"},
		{"another container passes elsewhere, not this one: held", func(f *Facts, _ *fakeMemory) { f.Elsewhere = map[string]int{"side": 2} },
			Hold, policyv1alpha1.HoldRestartIneffective, "not evicted"},
		{"an eviction refused within the window: held until it has passed", func(_ *Facts, m *fakeMemory) {
			m.evictions["pod-0"] = EvictionRecord{At: t0.Add(-time.Minute), Refused: "the disruption budget web needs 2 healthy pods"}
		}, Hold, policyv1alpha1.HoldRestartIneffective,
			"its eviction was refused at 2026-11-30T11:59:00Z: the disruption budget web needs 2 healthy pods; the next may be tried at 2026-11-30T12:09:00Z"},
		{"an eviction refused a window ago: evicted again", func(_ *Facts, m *fakeMemory) {
			m.evictions["pod-0"] = EvictionRecord{At: t0.Add(-10 * time.Minute), Refused: "refused"}
		}, Evict, "", "evicting it"},
		{"an eviction accepted within the window (the pod lingers): not again", func(_ *Facts, m *fakeMemory) {
			m.evictions["pod-0"] = EvictionRecord{At: t0.Add(-time.Minute)}
		}, Hold, policyv1alpha1.HoldRestartIneffective, "one eviction per pod per 10m0s"},
		{"a new leader (empty memory), the pod in an unexpired recentEvictions entry of its policy: held", func(f *Facts, _ *fakeMemory) {
			f.Policies[0].Evictions = []policyv1alpha1.RecentEviction{
				{Pod: "other", PodUID: "pod-9", Time: metav1.NewTime(t0.Add(-time.Minute)), Expires: metav1.NewTime(t0.Add(9 * time.Minute))},
				{Pod: "pod-0", PodUID: "pod-0", Time: metav1.NewTime(t0.Add(-2 * time.Minute)), Expires: metav1.NewTime(t0.Add(8 * time.Minute))}}
		}, Hold, policyv1alpha1.HoldRestartIneffective,
			"restarting it is not helping (policy ns/p); its eviction was tried at 2026-11-30T11:58:00Z (recorded in status.recentEvictions of policy ns/p until 2026-11-30T12:08:00Z, whatever the answer was); one eviction per pod per 10m0s"},
		{"the pod's recentEvictions entry expired: evicted again", func(f *Facts, _ *fakeMemory) {
			f.Policies[0].Evictions = []policyv1alpha1.RecentEviction{
				{Pod: "pod-0", PodUID: "pod-0", Time: metav1.NewTime(t0.Add(-10 * time.Minute)), Expires: metav1.NewTime(t0)}}
		}, Evict, "", "evicting it"},
		{"only another pod's entry: evicted", func(f *Facts, _ *fakeMemory) {
			f.Policies[0].Evictions = []policyv1alpha1.RecentEviction{
				{Pod: "pod-0", PodUID: "pod-0-old", Time: metav1.NewTime(t0.Add(-time.Minute)), Expires: metav1.NewTime(t0.Add(9 * time.Minute))}}
		}, Evict, "", "evicting it"},
		{"the entry is kept by a second governing policy: held", func(f *Facts, _ *fakeMemory) {
			p := f.Policies[0]
			p.Key.Name = "q"
			p.Evictions = []policyv1alpha1.RecentEviction{
				{Pod: "pod-0", PodUID: "pod-0", Time: metav1.NewTime(t0.Add(-time.Minute)), Expires: metav1.NewTime(t0.Add(time.Second))}}
			f.Policies = append(f.Policies, p)
		}, Hold, policyv1alpha1.HoldRestartIneffective, "status.recentEvictions of policy ns/q until 2026-11-30T12:00:01Z"},
		{"the memory's refusal is told before the status entry", func(f *Facts, m *fakeMemory) {
			m.evictions["pod-0"] = EvictionRecord{At: t0.Add(-time.Minute), Refused: "refused by a budget"}
			f.Policies[0].Evictions = []policyv1alpha1.RecentEviction{
				{Pod: "pod-0", PodUID: "pod-0", Time: metav1.NewTime(t0.Add(-time.Minute)), Expires: metav1.NewTime(t0.Add(9 * time.Minute))}}
		}, Hold, policyv1alpha1.HoldRestartIneffective, "its eviction was refused at 2026-11-30T11:59:00Z: refused by a budget"},
		{"the record of an attempt the memory knows was withdrawn, still in the cache: evicted", func(f *Facts, m *fakeMemory) {
			m.evictions["pod-0"] = EvictionRecord{At: t0.Add(-time.Minute + 300*time.Millisecond), Withdrawn: true}
			f.Policies[0].Evictions = []policyv1alpha1.RecentEviction{
				{Pod: "pod-0", PodUID: "pod-0", Time: metav1.NewTime(t0.Add(-time.Minute)), Expires: metav1.NewTime(t0.Add(9 * time.Minute))}}
		}, Evict, "", "evicting it"},
		{"a withdrawn attempt does not void an earlier leader's record: held", func(f *Facts, m *fakeMemory) {
			m.evictions["pod-0"] = EvictionRecord{At: t0.Add(-time.Minute), Withdrawn: true}
			f.Policies[0].Evictions = []policyv1alpha1.RecentEviction{
				{Pod: "pod-0", PodUID: "pod-0", Time: metav1.NewTime(t0.Add(-2 * time.Minute)), Expires: metav1.NewTime(t0.Add(8 * time.Minute))}}
		}, Hold, policyv1alpha1.HoldRestartIneffective, "its eviction was tried at 2026-11-30T11:58:00Z (recorded"},
		{"a withdrawn attempt alone: evicted", func(_ *Facts, m *fakeMemory) {
			m.evictions["pod-0"] = EvictionRecord{At: t0.Add(-time.Minute), Withdrawn: true}
		}, Evict, "", "evicting it"},
		{"maxUnavailable still holds it", func(f *Facts, _ *fakeMemory) {
			for i := 1; i <= 3; i++ {
				f.Workload.Pods[i].Ready = false
			}
		}, Hold, policyv1alpha1.HoldMaxUnavailable, ""},
		{"the rate limit still holds it", func(_ *Facts, m *fakeMemory) { m.tokenWait = time.Second },
			Hold, policyv1alpha1.HoldRateLimited, ""},
		{"a second policy that holds: held", func(f *Facts, _ *fakeMemory) {
			p := f.Policies[0]
			p.Key.Name, p.Breaker.Evict = "q", false
			f.Policies = append(f.Policies, p)
		}, Hold, policyv1alpha1.HoldRestartIneffective, "restarting it is not helping"},
		{"a disabled breaker beside an evicting one: evicted", func(f *Facts, _ *fakeMemory) {
			p := f.Policies[0]
			p.Key.Name, p.Breaker = "off", RestartBreaker{}
			f.Policies = append(f.Policies, p)
		}, Evict, "", "evicting it"},
		{"its policy's status keeps 16 evictions that last: held until the first expires", func(f *Facts, _ *fakeMemory) {
			f.Policies[0].Evictions = recorded(MaxRecentEvictions, 0)
		}, Hold, policyv1alpha1.HoldRestartIneffective,
			"; not evicted: status.recentEvictions of policy ns/p keeps 16 evictions that have not expired, the most it records; the next may be tried at 2026-11-30T12:01:00Z, when the first expires"},
		{"16 entries, one of them expired: evicted", func(f *Facts, _ *fakeMemory) {
			f.Policies[0].Evictions = recorded(MaxRecentEvictions, 1)
		}, Evict, "", "evicting it"},
		{"the default policy keeps no record: evicted", func(f *Facts, _ *fakeMemory) {
			f.Policies[0].Key.Name = defaultPolicyName
			f.Policies[0].Evictions = recorded(MaxRecentEvictions, 0)
		}, Evict, "", "evicting it"},
		{"only the workload's other pods' restarts did not help: held, not evicted", func(_ *Facts, m *fakeMemory) {
			m.restarts = append(own("a", 1), own("b", 1)...)
		}, Hold, policyv1alpha1.HoldRestartIneffective, "restarts of Deployment/web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, x := baseFacts()
			f.Policies[0].Breaker = evicting
			f.Elsewhere = map[string]int{"app": 1}
			m := newFakeMemory()
			m.evictions = map[types.UID]EvictionRecord{}
			m.restarts = own("pod-0", 2)
			tc.mutate(f, m)
			d := Decide(f, x, m)
			if d.Outcome != tc.outcome || d.Reason != tc.reason || !strings.Contains(d.Message, tc.message) {
				t.Fatalf("got %s %s (%s), want %s %s %q", d.Outcome, d.Reason, d.Message, tc.outcome, tc.reason, tc.message)
			}
			// An eviction is the canary of the key's hold (one it begins when there is none).
			if d.Canary != (tc.outcome == Evict) || d.NewHold != (tc.outcome == Hold) {
				t.Errorf("canary %v, new hold %v", d.Canary, d.NewHold)
			}
		})
	}
}

// recorded is a policy's status.recentEvictions of n other pods, evicted a minute apart, the
// first of them expiring a minute from t0; the expired first ones have expired at t0.
func recorded(n, expired int) []policyv1alpha1.RecentEviction {
	var out []policyv1alpha1.RecentEviction
	for i := range n {
		left := time.Duration(i+1-expired) * time.Minute
		out = append(out, policyv1alpha1.RecentEviction{Pod: fmt.Sprint("other-", i), PodUID: types.UID(fmt.Sprint("other-", i)),
			Time: metav1.NewTime(t0.Add(left - 10*time.Minute)), Expires: metav1.NewTime(t0.Add(left))})
	}
	return out
}

func TestRestartBreakerEvictsOnlyIfEveryEnforcingPolicyDoes(t *testing.T) {
	evict := Policy{Key: PolicyKey{Name: "evict"}, Breaker: RestartBreaker{Enabled: true, MinIneffective: 2, Window: time.Minute, Evict: true}}
	hold := Policy{Key: PolicyKey{Name: "hold"}, Breaker: RestartBreaker{Enabled: true, MinIneffective: 3, Window: time.Minute}}
	off := Policy{Key: PolicyKey{Name: "off"}, Breaker: RestartBreaker{Evict: true}}
	for _, tc := range []struct {
		g    Governing
		want bool
	}{
		{Governing{evict}, true},
		{Governing{evict, hold}, false},
		{Governing{hold, evict}, false},
		{Governing{evict, off}, true},
		{Governing{off}, false},
	} {
		if b, _ := tc.g.RestartBreaker(); b.Evict != tc.want {
			t.Errorf("%v: Evict = %v, want %v", tc.g, b.Evict, tc.want)
		}
	}
}

// status.recentEvictions: newest first, no expired entry, one per pod, at most 16, none dropped
// before it expires.
func TestRecordEviction(t *testing.T) {
	entry := func(pod string, age, left time.Duration) policyv1alpha1.RecentEviction {
		return policyv1alpha1.RecentEviction{Pod: pod, PodUID: types.UID(pod), Node: "n", Container: "app",
			Time: metav1.NewTime(t0.Add(-age)), Expires: metav1.NewTime(t0.Add(left))}
	}
	pods := func(list []policyv1alpha1.RecentEviction) string {
		var out []string
		for _, e := range list {
			out = append(out, e.Pod)
		}
		return strings.Join(out, ",")
	}
	full := func() []policyv1alpha1.RecentEviction {
		var out []policyv1alpha1.RecentEviction
		for i := range MaxRecentEvictions {
			out = append(out, entry(fmt.Sprint("p", i), time.Duration(i+1)*time.Second, time.Hour))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		list []policyv1alpha1.RecentEviction
		add  policyv1alpha1.RecentEviction
		want string
	}{
		{"into nothing", nil, entry("new", 0, time.Minute), "new"},
		{"newest first", []policyv1alpha1.RecentEviction{entry("b", time.Minute, time.Minute), entry("a", 2*time.Minute, time.Minute)},
			entry("new", 0, time.Minute), "new,b,a"},
		{"an entry from a clock ahead stays first", []policyv1alpha1.RecentEviction{entry("ahead", -time.Second, time.Minute)},
			entry("new", 0, time.Minute), "ahead,new"},
		{"expired entries dropped (expires at now included)", []policyv1alpha1.RecentEviction{entry("live", time.Minute, time.Second),
			entry("now", time.Minute, 0), entry("gone", time.Hour, -time.Minute)}, entry("new", 0, time.Minute), "new,live"},
		{"the same pod's earlier entry replaced", []policyv1alpha1.RecentEviction{entry("new", time.Minute, time.Minute), entry("a", 2*time.Minute, time.Minute)},
			entry("new", 0, time.Minute), "new,a"},
		{"16 that last: refused, none dropped", full(), entry("new", 0, time.Minute),
			"p0,p1,p2,p3,p4,p5,p6,p7,p8,p9,p10,p11,p12,p13,p14,p15"},
		{"16 that last, one of them the same pod's: replaced", full(), entry("p3", 0, time.Minute),
			"p3,p0,p1,p2,p4,p5,p6,p7,p8,p9,p10,p11,p12,p13,p14,p15"},
		{"16, one expired: it makes room", append(full()[:15], entry("old", time.Hour, 0)), entry("new", 0, time.Minute),
			"new,p0,p1,p2,p3,p4,p5,p6,p7,p8,p9,p10,p11,p12,p13,p14"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := pods(tc.list)
			got, ok := RecordEviction(tc.list, tc.add, t0)
			if pods(got) != tc.want || ok != strings.Contains(tc.want, tc.add.Pod) {
				t.Errorf("got %s (%v), want %s", pods(got), ok, tc.want)
			}
			if pods(tc.list) != before {
				t.Errorf("the list given was changed: %s, was %s", pods(tc.list), before)
			}
		})
	}
}

func TestPruneEvictionsAndNextExpiry(t *testing.T) {
	at := func(pod string, left time.Duration) policyv1alpha1.RecentEviction {
		return policyv1alpha1.RecentEviction{Pod: pod, PodUID: types.UID(pod), Expires: metav1.NewTime(t0.Add(left))}
	}
	list := []policyv1alpha1.RecentEviction{at("a", time.Minute), at("b", 0), at("c", -time.Second), at("d", time.Second)}
	got := PruneEvictions(list, t0)
	if len(got) != 2 || got[0].Pod != "a" || got[1].Pod != "d" {
		t.Errorf("PruneEvictions kept %v, want a and d", got)
	}
	if got := PruneEvictions(list[1:3], t0); got != nil {
		t.Errorf("nothing left: got %v, want nil", got)
	}
	if got := NextExpiry(got); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("NextExpiry = %s, want %s", got, t0.Add(time.Second))
	}
	if got := NextExpiry(nil); !got.IsZero() {
		t.Errorf("NextExpiry(nil) = %s, want zero", got)
	}
	if got := WithoutEviction(list, "b"); len(got) != 3 || got[1].Pod != "c" {
		t.Errorf("WithoutEviction(b) = %v", got)
	}
}

// A pod that an eviction cannot move elsewhere, or whose eviction costs more than the failure, is
// held for its restarts, never evicted; the hold says why, and ends as every doubt hold does.
func TestNoEvictionThatCannotMove(t *testing.T) {
	for _, tc := range []struct {
		name      string
		placement Placement
		message   string // "" when evicted
	}{
		{"a Deployment's pod: evicted", Placement{ControllerGroup: "apps", ControllerKind: "ReplicaSet"}, ""},
		{"a bare pod's placement: evicted (its Elsewhere decides)", Placement{}, ""},
		{"a DaemonSet's pod", Placement{ControllerGroup: "apps", ControllerKind: "DaemonSet"},
			"; not evicted: a DaemonSet pod cannot move to another node"},
		{"another project's DaemonSet kind", Placement{ControllerGroup: "apps.kruise.io", ControllerKind: "DaemonSet"},
			"; not evicted: a DaemonSet pod cannot move to another node"},
		{"a Job's pod", Placement{ControllerGroup: "batch", ControllerKind: "Job"},
			"; not evicted: a Job pod's eviction counts against its backoffLimit"},
		{"a kind named Job of another group: evicted", Placement{ControllerGroup: "example.com", ControllerKind: "Job"}, ""},
		{"bound to its node", Placement{ControllerGroup: "apps", ControllerKind: "StatefulSet", Node: "n1",
			By: "PersistentVolumeClaim data-web-0 (local PersistentVolume pv-1)"},
			"; not evicted: bound to node n1 by PersistentVolumeClaim data-web-0 (local PersistentVolume pv-1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, x := baseFacts()
			f.Policies[0].Breaker = RestartBreaker{Enabled: true, MinIneffective: 2, Window: 10 * time.Minute, Evict: true}
			f.Policies[0].MaxHold = 10 * time.Minute
			f.Elsewhere = map[string]int{"app": 3}
			f.Placement = tc.placement
			m := newFakeMemory()
			m.restarts = []RestartRecord{
				{RestartID: RestartID{Pod: "pod-0", Container: "app", Instance: "c-0", At: t0.Add(-2 * time.Minute)}, Ineffective: true},
				{RestartID: RestartID{Pod: "pod-0", Container: "app", Instance: "c-1", At: t0.Add(-time.Minute)}, Ineffective: true}}
			d := Decide(f, x, m)
			if tc.message == "" {
				if d.Outcome != Evict {
					t.Fatalf("got %s %s (%s), want Evict", d.Outcome, d.Reason, d.Message)
				}
				return
			}
			want := "restarting it is not helping (policy ns/p)" + tc.message +
				"; held since 2026-11-30T12:00:00Z; one held pod is restarted as canary 1 at 2026-11-30T12:02:00Z"
			if d.Outcome != Hold || d.Reason != policyv1alpha1.HoldRestartIneffective || !d.NewHold || !strings.Contains(d.Message, want) {
				t.Fatalf("got %s %s new %v (%s), want a new RestartIneffective hold with %q", d.Outcome, d.Reason, d.NewHold, d.Message, want)
			}
			if d.Seen.Hold == nil || d.Seen.Hold.Reason != policyv1alpha1.HoldRestartIneffective {
				t.Errorf("the key's doubt hold was not begun: %+v", d.Seen.Hold)
			}
		})
	}
}
