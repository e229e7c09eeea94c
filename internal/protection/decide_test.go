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

package protection

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
)

// baseFacts is a healthy 10-replica workload where one pod's container failed: everything allows
// the restart. Each case changes one fact and expects the rule of that step to answer.
func baseFacts() Facts {
	pol := Policy{Key: PolicyKey{Namespace: "ns", Name: "p"}, MaxUnavailable: intstr.FromString("25%"), MaxFailing: intstr.FromString("50%"), Rate: Rate{PerMinute: 6, Burst: 3}, Breaker: DefaultRestartBreaker}
	return Facts{
		PodFound: true, ResultContainerID: "containerd://a", RunningContainerID: "containerd://a", LeaseCurrent: true,
		Policies:     Governing{pol},
		Target:       Target{Workload: WorkloadRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, Container: "app"},
		Workload:     WorkloadState{Desired: 10, Pods: pods(10, 10, 1, 0)},
		PodAvailable: true,
		Node:         NodeState{Name: "n1", Pods: 10, FailingPods: 1, FailingWorkloads: 1},
		NodeRule:     NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 3},
	}
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestDecideInOrder(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*Facts)
		outcome Outcome
		reason  Reason
	}{
		{"everything allows", func(*Facts) {}, Restart, ""},
		{"pod gone", func(f *Facts) { f.PodFound = false }, Ignore, ""},
		{"pod terminating", func(f *Facts) { f.PodTerminating = true }, Ignore, ""},
		{"stale containerID", func(f *Facts) { f.RunningContainerID = "containerd://b" }, Ignore, ""},
		{"container not running", func(f *Facts) { f.RunningContainerID = "" }, Ignore, ""},
		{"stale beats lease", func(f *Facts) { f.RunningContainerID = "containerd://b"; f.LeaseCurrent = false }, Ignore, ""},
		{"lease expired", func(f *Facts) { f.LeaseCurrent = false }, Hold, ReasonDaemonNotReporting},
		{"result taken before the daemon's start", func(f *Facts) {
			f.ResultProbeTime, f.DaemonStarted, f.DaemonRenewed = t0.Add(-time.Second), t0, t0.Add(5*time.Second)
		}, Hold, ReasonDaemonNotReporting},
		{"result no longer refreshed", func(f *Facts) {
			// period 10 s: stale after 2*20 s + 2*10 s = 60 s
			f.ProbePeriod, f.DaemonStarted, f.ResultProbeTime, f.DaemonRenewed = 10, t0, t0.Add(time.Minute), t0.Add(2*time.Minute+time.Second)
		}, Hold, ReasonDaemonNotReporting},
		{"result refreshed in time", func(f *Facts) {
			f.ProbePeriod, f.DaemonStarted, f.ResultProbeTime, f.DaemonRenewed = 10, t0, t0.Add(time.Minute), t0.Add(2*time.Minute)
		}, Restart, ""},
		{"stale evidence comes after the lease", func(f *Facts) {
			f.LeaseCurrent, f.ResultProbeTime, f.DaemonStarted = false, t0.Add(-time.Second), t0
		}, Hold, ReasonDaemonNotReporting},
		{"stale evidence before the switches", func(f *Facts) {
			f.ResultProbeTime, f.DaemonStarted, f.PodRestartDisabled = t0.Add(-time.Second), t0, true
		}, Hold, ReasonDaemonNotReporting},
		{"pod switch", func(f *Facts) { f.PodRestartDisabled = true }, Hold, ReasonDisabled},
		{"manager switch", func(f *Facts) { f.ManagerDisabled = true }, Hold, ReasonDisabled},
		{"dry run", func(f *Facts) { f.Policies[0].DryRun = true }, Hold, ReasonDryRun},
		{"switch before blacklist", func(f *Facts) {
			f.PodRestartDisabled = true
			f.Policies[0].Blacklist = Blacklist{containers: map[string]struct{}{"app": {}}}
		}, Hold, ReasonDisabled},
		{"blacklist", func(f *Facts) { f.Policies[0].Blacklist = Blacklist{containers: map[string]struct{}{"app": {}}} }, Hold, ReasonBlacklisted},
		{"blacklist before active CRR", func(f *Facts) {
			f.Policies[0].Blacklist = Blacklist{containers: map[string]struct{}{"app": {}}}
			f.PodHasActiveCRR = true
		}, Hold, ReasonBlacklisted},
		{"active CRR waits", func(f *Facts) { f.PodHasActiveCRR = true }, Wait, ""},
		{"active CRR before storm", func(f *Facts) { f.PodHasActiveCRR = true; f.Workload.Pods = pods(10, 10, 6, 0) }, Wait, ""},
		{"5 of 10 failing: no storm", func(f *Facts) { f.Workload.Pods = pods(10, 10, 5, 0) }, Restart, ""},
		{"6 of 10 failing: storm", func(f *Facts) { f.Workload.Pods = pods(10, 10, 6, 0) }, Hold, ReasonFailureStorm},
		{"1 failing and 5 starting to fail of 10: storm before the others reach their threshold", func(f *Facts) {
			f.Workload.Pods = suspects(pods(10, 10, 1, 0), 5)
		}, Hold, ReasonFailureStorm},
		{"1 failing and 4 starting to fail of 10: no storm", func(f *Facts) {
			f.Workload.Pods = suspects(pods(10, 10, 1, 0), 4)
		}, Restart, ""},
		{"a new revision of 3 pods failing or starting to fail, in a workload of 10: storm", func(f *Facts) {
			f.Workload.Pods = revision(suspects(pods(10, 10, 1, 0), 2), 3, "rs-new")
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Hold, ReasonFailureStorm},
		{"the only pod of a new revision fails: no storm", func(f *Facts) {
			f.Workload.Pods = revision(pods(10, 10, 1, 0), 1, "rs-new")
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Restart, ""},
		{"a rollout: 2 new pods failing or starting to fail, the other 8 not probed yet: storm", func(f *Facts) {
			f.Workload.Pods = unprobed(revision(suspects(pods(10, 10, 1, 0), 1), 10, "rs-new"), 2)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Hold, ReasonFailureStorm},
		{"a rollout: the first new pod fails, the others not probed yet: wait for their first results", func(f *Facts) {
			f.Workload.Pods = unprobed(revision(pods(10, 10, 1, 0), 10, "rs-new"), 1)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
			f.ProbePeriod, f.FailedFor = 1, 9*time.Second
		}, Wait, ""},
		{"a rollout: the first new pod fails, the others still not probed after the wait: restart", func(f *Facts) {
			f.Workload.Pods = unprobed(revision(pods(10, 10, 1, 0), 10, "rs-new"), 1)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
			f.ProbePeriod, f.FailedFor = 1, 10*time.Second
		}, Restart, ""},
		{"a new revision whose other pod passed its probe: no wait for the unprobed ones", func(f *Facts) {
			f.Workload.Pods = unprobed(revision(pods(10, 10, 1, 0), 10, "rs-new"), 2)
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Restart, ""},
		{"1 of a new revision of 3 failing, the rest healthy: no storm", func(f *Facts) {
			f.Workload.Pods = revision(pods(10, 10, 1, 0), 3, "rs-new")
			f.Workload.Revision, f.Workload.RevisionUID = "ReplicaSet/web-new", "rs-new"
		}, Restart, ""},
		{"storm holds even an unavailable pod", func(f *Facts) { f.Workload.Pods = pods(10, 4, 6, 0); f.PodAvailable = false }, Hold, ReasonFailureStorm},
		{"restarts that do not help", func(f *Facts) { f.Restarts = RestartTally{Requested: 2, Ineffective: 2} }, Hold, ReasonRestartIneffective},
		{"restarts that mostly helped", func(f *Facts) { f.Restarts = RestartTally{Requested: 5, Ineffective: 2} }, Restart, ""},
		{"the breaker of a policy that disables it", func(f *Facts) {
			f.Policies[0].Breaker.Enabled = false
			f.Restarts = RestartTally{Requested: 2, Ineffective: 2}
		}, Restart, ""},
		{"storm before ineffective restarts", func(f *Facts) {
			f.Restarts = RestartTally{Requested: 2, Ineffective: 2}
			f.Workload.Pods = pods(10, 10, 6, 0)
		}, Hold, ReasonFailureStorm},
		{"node storm", func(f *Facts) { f.Node = NodeState{Name: "n1", Pods: 10, FailingPods: 6, FailingWorkloads: 4} }, Hold, ReasonNodeStorm},
		{"5 of 10 failing right after a storm: still settling", func(f *Facts) {
			f.Workload.Pods = pods(10, 10, 5, 0)
			f.WorkloadStormSettling = 12 * time.Second
		}, Hold, ReasonFailureStorm},
		{"node storm settling", func(f *Facts) { f.NodeStormSettling = time.Second }, Hold, ReasonNodeStorm},
		{"settling comes after the switches", func(f *Facts) { f.WorkloadStormSettling = time.Second; f.PodRestartDisabled = true }, Hold, ReasonDisabled},
		{"budget: 2 of 3 unavailable allows", func(f *Facts) { f.Workload.Pods = pods(10, 10, 3, 2) }, Restart, ""},
		{"budget: 3 of 3 unavailable holds", func(f *Facts) { f.Workload.Pods = pods(10, 10, 4, 3) }, Hold, ReasonMaxUnavailable},
		{"budget: unavailable pod may always restart", func(f *Facts) {
			f.Workload.Pods = pods(10, 6, 4, 0)
			f.PodAvailable = false
		}, Restart, ""},
		{"budget: most restrictive policy", func(f *Facts) {
			f.Policies = append(f.Policies, Policy{Key: PolicyKey{Namespace: "ns", Name: "strict"}, MaxUnavailable: intstr.FromInt32(1), MaxFailing: intstr.FromString("50%"), Rate: Rate{PerMinute: 6, Burst: 3}})
			f.Workload.Pods = pods(10, 10, 2, 1)
		}, Hold, ReasonMaxUnavailable},
		{"budget: maxUnavailable 0", func(f *Facts) { f.Policies[0].MaxUnavailable = intstr.FromInt32(0) }, Hold, ReasonMaxUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := baseFacts()
			f.Policies = append(Governing(nil), f.Policies...)
			c.mutate(&f)
			l := NewLimiter(clocktesting.NewFakePassiveClock(time.Now()), Rate{})
			d := Decide(f, l)
			if d.Outcome != c.outcome || d.Reason != c.reason {
				t.Fatalf("got %s/%s (%s), want %s/%s", d.Outcome, d.Reason, d.Message, c.outcome, c.reason)
			}
			if d.Outcome == Hold && d.Message == "" {
				t.Fatal("a hold must say why")
			}
			// Only a restart takes a token.
			want := 3.0
			if d.Outcome == Restart {
				want = 2
			}
			for _, k := range f.Policies.Keys() {
				if got := l.Tokens(k); got != -1 && got != want {
					t.Fatalf("bucket %s has %v tokens, want %v", k, got, want)
				}
			}
		})
	}
}

func TestDecideRateLimited(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := NewLimiter(clk, Rate{})
	f := baseFacts()
	for i := range 3 {
		if d := Decide(f, l); d.Outcome != Restart {
			t.Fatalf("restart %d: %s %s", i, d.Outcome, d.Message)
		}
	}
	d := Decide(f, l)
	if d.Outcome != Hold || d.Reason != ReasonRateLimited || d.RequeueAfter != 10*time.Second {
		t.Fatalf("got %s/%s after %s", d.Outcome, d.Reason, d.RequeueAfter)
	}
	clk.SetTime(clk.Now().Add(d.RequeueAfter))
	if d := Decide(f, l); d.Outcome != Restart {
		t.Fatalf("after the wait: %s %s", d.Outcome, d.Message)
	}
}

func TestStaleNeedsOnlyThePodAndTheResult(t *testing.T) {
	// Only the pod and the result are set: the lease, policies and workload are not known yet.
	fresh := Facts{PodFound: true, ResultContainerID: "containerd://a", RunningContainerID: "containerd://a"}
	if _, stale := Stale(fresh); stale {
		t.Fatal("a result for the running container is not stale")
	}
	for name, f := range map[string]Facts{
		"gone":        {ResultContainerID: "containerd://a", RunningContainerID: "containerd://a"},
		"terminating": {PodFound: true, PodTerminating: true, ResultContainerID: "containerd://a", RunningContainerID: "containerd://a"},
		"replaced":    {PodFound: true, ResultContainerID: "containerd://a", RunningContainerID: "containerd://b"},
		"not running": {PodFound: true, ResultContainerID: "containerd://a"},
	} {
		if d, stale := Stale(f); !stale || d.Outcome != Ignore {
			t.Errorf("%s: want Ignore, got %v %s", name, stale, d.Outcome)
		}
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
