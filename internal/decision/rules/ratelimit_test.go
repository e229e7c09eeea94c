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

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// hangFacts: every pod of the 10 of web hangs but pod 0, the canary, whose restart cured it; pod
// i is decided. ready: the hung pods stay Ready (no readiness probe, or one that still passes).
// Its probe: period 1 s, threshold 3, so a restart is judged 6 s after it (SoonAfterRestart).
func hangFacts(i int, ready bool) (*Facts, Failure) {
	f, x := baseFacts()
	f.Policies[0].MaxHold = 10 * time.Minute
	f.Workload.Pods = pods(10, 10, 10, 0)
	for j := range f.Workload.Pods {
		p := &f.Workload.Pods[j]
		p.UID, p.Ready = types.UID(fmt.Sprint("pod-", j)), ready || j == 0
	}
	f.Workload.Pods[0].Failing, f.Workload.Pods[0].Healthy = false, true
	f.Pod.Name, f.UID, f.Self = fmt.Sprint("web-", i), f.Workload.Pods[i].UID, f.Workload.Pods[i]
	x.Period, x.Threshold = 1, 3
	x.ContainerID, x.Running, x.Request = fmt.Sprint("containerd://app-", i), fmt.Sprint("containerd://app-", i), fmt.Sprint("web-", i, "-app-1")
	return f, x
}

// canaryRestart is the restart of pod 0, the canary, 40 s before t0.
var canaryRestart = RestartRecord{RestartID: RestartID{Pod: "pod-0", Container: "app", Instance: "containerd://app-0-old", At: t0.Add(-40 * time.Second)},
	Soon: 6 * time.Second}

// released is web's FailureStorm hold (onset 70 s before t0): its canary passed at passed.
func released(passed time.Time) DoubtHold {
	return DoubtHold{Reason: policyv1alpha1.HoldFailureStorm, Onset: t0.Add(-70 * time.Second), Since: t0.Add(-70 * time.Second),
		Period: FirstCanaryWait, Canaries: 1, Released: passed}
}

// After a canary whose restart helped, the held restarts of its workload container go without
// waiting on the token buckets, within maxUnavailable and one request per pod; a canary whose
// restart did not help releases nothing; other workloads stay rate limited.
func TestReleasedPastTheRateLimit(t *testing.T) {
	cases := []struct {
		name  string
		ready bool
		setup func(*fakeMemory)
		// want is the outcome of deciding pods 1 to 9 in turn, each restart expected by the next.
		want []string
	}{
		{"the canary passed 10 s ago, the hung pods are not ready: all 9 restarted with an empty bucket", false,
			func(m *fakeMemory) { m.holds[webApp] = released(t0.Add(-10 * time.Second)) },
			[]string{"Restart", "Restart", "Restart", "Restart", "Restart", "Restart", "Restart", "Restart", "Restart"}},
		{"the canary passed 10 s ago, the hung pods are Ready: 3 at a time (maxUnavailable 25%)", true,
			func(m *fakeMemory) { m.holds[webApp] = released(t0.Add(-10 * time.Second)) },
			[]string{"Restart", "Restart", "Restart", "MaxUnavailable", "MaxUnavailable", "MaxUnavailable", "MaxUnavailable", "MaxUnavailable", "MaxUnavailable"}},
		{"the canary passed 2 s ago: held until it has stood its 6 s, tokens or not", false, func(m *fakeMemory) {
			m.holds[webApp] = released(t0.Add(-2 * time.Second))
			m.tokenWait = 0
		}, []string{"FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm"}},
		{"the canary failed its probe again soon: nothing released, tokens or not", false, func(m *fakeMemory) {
			st := released(time.Time{})
			st.Canary = &Canary{Pod: "pod-0", PodName: "web-0", Container: "app", Instance: "containerd://app-0-old", At: canaryRestart.At, Deadline: t0.Add(time.Minute)}
			m.holds[webApp] = st
			r := canaryRestart
			r.Ineffective = true
			m.restarts = []RestartRecord{r}
			m.tokenWait = 0
		}, []string{"FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm"}},
		{"the canary passed, then failed again soon: nothing more released", false, func(m *fakeMemory) {
			m.holds[webApp] = released(t0.Add(-30 * time.Second))
			r := canaryRestart
			r.Ineffective = true
			m.restarts = []RestartRecord{r}
			m.tokenWait = 0
		}, []string{"FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm"}},
		{"released maxHold ago: a new hold", false,
			func(m *fakeMemory) { m.holds[webApp] = released(t0.Add(-10*time.Minute - 6*time.Second)) },
			[]string{"FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm", "FailureStorm"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newFakeMemory()
			m.tokenWait = 10 * time.Second // the buckets are empty
			m.restarts = []RestartRecord{canaryRestart}
			tc.setup(m)
			var got []string
			for i := 1; i <= 9; i++ {
				f, x := hangFacts(i, tc.ready)
				d := Decide(f, x, m)
				switch d.Outcome {
				case Restart:
					got = append(got, "Restart")
					if !d.Proven {
						t.Errorf("web-%d restarted, not as proven by the canary", i)
					}
					m.expected[f.UID] = x.Request // as the memory does
				case Hold:
					got = append(got, string(d.Reason))
					if h := m.holds[webApp]; !h.Released.IsZero() && t0.Before(h.Released.Add(6*time.Second)) &&
						(d.RequeueAfter != 4*time.Second || !strings.Contains(d.Message, "the held pods follow at 2026-11-30T12:00:04Z, past the rate limit")) {
						t.Errorf("web-%d: decided again in %s, want 4s: when the canary has stood its 6 s (%s)", i, d.RequeueAfter, d.Message)
					}
				default:
					got = append(got, string(d.Outcome))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// A restart released past the rate limit is the released key's only: the workload's other
// container, another workload, and a pod evicted instead wait for their token as ever; a
// released key's failure that no doubt rule holds any more (the storm ended) goes once the
// canary has stood its time, and is decided again at that moment before.
func TestOnlyTheReleasedKeyPassesTheRateLimit(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Facts, *Failure, *fakeMemory)
		want   string
		proven bool
		// requeue and note, when set, are when a hold is decided again and what its note says.
		requeue time.Duration
		note    string
	}{
		{"the storm ended, the key's hold is still released: restarted", func(*Facts, *Failure, *fakeMemory) {}, "Restart", true, 0, ""},
		{"the storm ended, the canary passed 2 s ago: rate limited until it has stood its 6 s", func(_ *Facts, _ *Failure, m *fakeMemory) {
			m.holds[webApp] = released(t0.Add(-2 * time.Second))
		}, "RateLimited", false, 4 * time.Second, "from 2026-11-30T12:00:04Z they no longer wait for tokens"},
		{"another workload: rate limited", func(f *Facts, _ *Failure, _ *fakeMemory) { f.Workload.Ref.Name = "api" },
			"RateLimited", false, 10 * time.Second, ""},
		{"another container of the workload: rate limited", func(_ *Facts, x *Failure, _ *fakeMemory) { x.Container = "side" },
			"RateLimited", false, 10 * time.Second, ""},
		{"the pod's own restarts did not help, evicted instead: an eviction keeps its rate limit", func(f *Facts, _ *Failure, m *fakeMemory) {
			f.Policies[0].Breaker = RestartBreaker{Enabled: true, MinIneffective: 2, Window: 10 * time.Minute, Evict: true}
			f.Elsewhere = map[string]int{"app": 1}
			for k := range 2 {
				m.restarts = append(m.restarts, RestartRecord{RestartID: RestartID{Pod: "pod-1", Container: "app", Instance: fmt.Sprint("c-", k),
					At: t0.Add(-time.Duration(5-k) * time.Minute)}, Ineffective: true})
			}
		}, "RateLimited", false, 10 * time.Second, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Only pods 0 (the canary, passing now) and 1 failed: no storm any more.
			f, x := hangFacts(1, true)
			for j := 2; j < 10; j++ {
				f.Workload.Pods[j].Failing, f.Workload.Pods[j].Healthy = false, true
			}
			m := newFakeMemory()
			m.tokenWait = 10 * time.Second
			m.restarts = []RestartRecord{canaryRestart}
			m.holds[webApp] = released(t0.Add(-10 * time.Second))
			m.evictions = map[types.UID]EvictionRecord{}
			tc.mutate(f, &x, m)
			d := Decide(f, x, m)
			got := string(d.Outcome)
			if d.Outcome == Hold {
				got = string(d.Reason)
			}
			if got != tc.want || d.Proven != tc.proven {
				t.Fatalf("got %s proven %v (%s), want %s proven %v", got, d.Proven, d.Message, tc.want, tc.proven)
			}
			if tc.requeue != 0 && (d.RequeueAfter != tc.requeue || !strings.Contains(d.Message, tc.note)) {
				t.Fatalf("decided again in %s (%s), want %s and a note saying %q", d.RequeueAfter, d.Message, tc.requeue, tc.note)
			}
		})
	}
}
