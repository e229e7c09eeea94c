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

	"k8s.io/apimachinery/pkg/util/intstr"
)

// pods builds n pods: the first ready ones Ready, failing of them Failing, active with an active CRR.
func pods(n, ready, failing, active int) []PodState {
	out := make([]PodState, n)
	for i := range out {
		out[i] = PodState{Ready: i < ready, Failing: i < failing, Healthy: i >= failing, ActiveCRR: i < active}
	}
	return out
}

// withSuspects marks pods i as suspect (started failing, below the threshold).
func withSuspects(ps []PodState, i ...int) []PodState {
	for _, j := range i {
		ps[j].Suspect, ps[j].Healthy = true, false
	}
	return ps
}

func TestRevisionStormSuspectsInSmallWorkloads(t *testing.T) {
	rev := func(desired int32) WorkloadState {
		ps := []PodState{{Controller: "rs", Failing: true}, {Controller: "rs", Suspect: true}}
		return WorkloadState{Desired: desired, RevisionUID: "rs", Pods: ps}
	}
	half := func(n int32) int32 { return Scaled(intstr.FromString("50%"), n) }
	if _, _, storm := rev(2).RevisionStorm(half); storm {
		t.Error("a 2-replica workload's revision storms on a suspect")
	}
	if bad, total, storm := rev(4).RevisionStorm(half); !storm || bad != 2 || total != 2 {
		t.Errorf("a 4-replica workload's revision: %d of %d, storm %v", bad, total, storm)
	}
}

func TestUnavailableAndStorm(t *testing.T) {
	cases := []struct {
		name        string
		w           WorkloadState
		unavailable int32
		failing     int32
		maxFailing  intstr.IntOrString
		storm       bool
	}{
		{"all ready", WorkloadState{Desired: 10, Pods: pods(10, 10, 0, 0)}, 0, 0, intstr.FromString("50%"), false},
		{"missing pods count as unavailable", WorkloadState{Desired: 10, Pods: pods(8, 8, 0, 0)}, 2, 0, intstr.FromString("50%"), false},
		{"active CRR counts as unavailable", WorkloadState{Desired: 10, Pods: pods(10, 10, 3, 3)}, 3, 3, intstr.FromString("50%"), false},
		{"not ready counts", WorkloadState{Desired: 10, Pods: pods(10, 7, 0, 0)}, 3, 0, intstr.FromString("50%"), false},
		{"surge never negative", WorkloadState{Desired: 2, Pods: pods(4, 4, 0, 0)}, 0, 0, intstr.FromString("50%"), false},
		{"5 of 10 failing is not a storm", WorkloadState{Desired: 10, Pods: pods(10, 10, 5, 0)}, 0, 5, intstr.FromString("50%"), false},
		{"6 of 10 failing is a storm", WorkloadState{Desired: 10, Pods: pods(10, 10, 6, 0)}, 0, 6, intstr.FromString("50%"), true},
		{"1 replica failing at 50% is not a storm", WorkloadState{Desired: 1, Pods: pods(1, 1, 1, 0)}, 0, 1, intstr.FromString("50%"), false},
		{"2 of 3 failing at 50% is not a storm", WorkloadState{Desired: 3, Pods: pods(3, 3, 2, 0)}, 0, 2, intstr.FromString("50%"), false},
		{"3 of 3 failing at 50% is a storm", WorkloadState{Desired: 3, Pods: pods(3, 3, 3, 0)}, 0, 3, intstr.FromString("50%"), true},
		{"maxFailing 0: any failure is a storm", WorkloadState{Desired: 3, Pods: pods(3, 3, 1, 0)}, 0, 1, intstr.FromInt32(0), true},
		{"2 replicas: a hang beside a flaky sibling is no storm", WorkloadState{Desired: 2, Pods: withSuspects(pods(2, 2, 1, 0), 1)}, 0, 1, intstr.FromString("50%"), false},
		{"2 replicas: both failing is a storm", WorkloadState{Desired: 2, Pods: pods(2, 2, 2, 0)}, 0, 2, intstr.FromString("50%"), true},
		{"1 replica: maxFailing 0 and a suspect alone is no storm", WorkloadState{Desired: 1, Pods: withSuspects(pods(1, 1, 0, 0), 0)}, 0, 0, intstr.FromInt32(0), false},
		{"3 replicas: suspects count", WorkloadState{Desired: 3, Pods: withSuspects(pods(3, 3, 1, 0), 1, 2)}, 0, 1, intstr.FromString("50%"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.w.Unavailable(); got != c.unavailable {
				t.Errorf("unavailable %d, want %d", got, c.unavailable)
			}
			if got := c.w.FailingPods(); got != c.failing {
				t.Errorf("failing %d, want %d", got, c.failing)
			}
			if got := c.w.Storm(Scaled(c.maxFailing, c.w.Desired)); got != c.storm {
				t.Errorf("storm %v, want %v", got, c.storm)
			}
		})
	}
	terminating := WorkloadState{Desired: 2, Pods: []PodState{{Ready: true, Failing: true, Terminating: true}, {Ready: true}}}
	if terminating.Unavailable() != 1 || terminating.FailingPods() != 0 {
		t.Errorf("terminating pods are neither available nor failing: %d %d", terminating.Unavailable(), terminating.FailingPods())
	}
}

func TestNodeStorm(t *testing.T) {
	rule := NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 3}
	cases := []struct {
		name string
		n    NodeState
		want bool
	}{
		{"many workloads, most pods failing", NodeState{Pods: 10, FailingPods: 6, FailingWorkloads: 3}, true},
		{"exactly half failing", NodeState{Pods: 10, FailingPods: 5, FailingWorkloads: 5}, false},
		{"one workload's own storm is not a node storm", NodeState{Pods: 10, FailingPods: 10, FailingWorkloads: 1}, false},
		{"two workloads below minimum", NodeState{Pods: 4, FailingPods: 4, FailingWorkloads: 2}, false},
		{"empty node", NodeState{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rule.Storm(c.n); got != c.want {
				t.Fatalf("storm %v, want %v", got, c.want)
			}
		})
	}
	if err := (NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 0}).Validate(); err == nil {
		t.Error("MinWorkloads 0 must be rejected")
	}
	disabled := NodeStormRule{MaxFailing: intstr.FromString("100%"), MinWorkloads: 1}
	if disabled.Storm(NodeState{Pods: 5, FailingPods: 5, FailingWorkloads: 5}) {
		t.Error("100% never storms")
	}
}
