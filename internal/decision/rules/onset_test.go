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
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// onsetWorkload is a Deployment of 4 whose decided pod (the last) was first seen failing at
// decided, and whose 3 siblings at siblings, all of one revision. suspect: the siblings have only
// started to fail.
func onsetWorkload(decided, siblings time.Duration, suspect bool) WorkloadState {
	w := WorkloadState{Ref: WorkloadRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, Desired: 4,
		Revision: "ReplicaSet/web-1", RevisionUID: "rs-1", Onset: t0.Add(-decided)}
	for i := range 3 {
		w.Pods = append(w.Pods, PodState{UID: types.UID("sibling-" + string(rune('0'+i))), Ready: true, Controller: "rs-1",
			Failing: !suspect, Suspect: suspect, Onset: t0.Add(-siblings)})
	}
	w.Pods = append(w.Pods, PodState{UID: "decided", Ready: true, Controller: "rs-1", Failing: true, Onset: w.Onset})
	return w
}

// A workload storm is a correlated onset: siblings failing since long before the decided pod do
// not count toward its storm, siblings that began with it (before or after) do.
func TestWorkloadStormIsACorrelatedOnset(t *testing.T) {
	half := func(n int32) int32 { return Scaled(intstr.FromString("50%"), n) }
	for _, tc := range []struct {
		name              string
		w                 WorkloadState
		failing, suspects int32
		storm             bool
		revBad, revTotal  int32
		revStorm          bool
	}{
		{"3 of 4 failing for 20 minutes, then a new hang: no storm",
			onsetWorkload(0, 20*time.Minute, false), 1, 0, false, 1, 4, false},
		{"3 of 4 starting to fail for 20 minutes, then a new hang: no storm",
			onsetWorkload(0, 20*time.Minute, true), 1, 0, false, 1, 4, false},
		{"all 4 first seen failing within a minute: storm",
			onsetWorkload(0, time.Minute, false), 4, 0, true, 4, 4, true},
		{"3 siblings and the decided pod first seen 20 minutes ago, held all along: storm",
			onsetWorkload(20*time.Minute, 20*time.Minute, false), 4, 0, true, 4, 4, true},
		{"siblings first seen 4 minutes after the decided pod: an ongoing storm",
			onsetWorkload(4*time.Minute, 0, false), 4, 0, true, 4, 4, true},
		{"siblings first seen 6 minutes after the decided pod: no storm",
			onsetWorkload(6*time.Minute, 0, false), 1, 0, false, 1, 4, false},
		{"exactly the window apart: storm",
			onsetWorkload(0, StormCorrelation, true), 1, 3, true, 4, 4, true},
		{"the decided pod's onset unknown (the policy status): every pod counts",
			func() WorkloadState { w := onsetWorkload(0, time.Hour, false); w.Onset = time.Time{}; return w }(), 4, 0, true, 4, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.w.FailingPods(); got != tc.failing {
				t.Errorf("failing %d, want %d", got, tc.failing)
			}
			if got := tc.w.SuspectPods(); got != tc.suspects {
				t.Errorf("suspects %d, want %d", got, tc.suspects)
			}
			if got := tc.w.Storm(half(tc.w.Desired)); got != tc.storm {
				t.Errorf("storm %v, want %v", got, tc.storm)
			}
			bad, total, storm := tc.w.RevisionStorm(half)
			if bad != tc.revBad || total != tc.revTotal || storm != tc.revStorm {
				t.Errorf("revision storm %d of %d %v, want %d of %d %v", bad, total, storm, tc.revBad, tc.revTotal, tc.revStorm)
			}
		})
	}
}

// The revision storm of a rollout: old failures of the revision do not count; the revision's
// pods failing together still storm while they are a small part of the workload.
func TestRevisionStormIsACorrelatedOnset(t *testing.T) {
	half := func(n int32) int32 { return Scaled(intstr.FromString("50%"), n) }
	rollout := func(siblings time.Duration) WorkloadState {
		w := WorkloadState{Desired: 10, RevisionUID: "rs-new", Onset: t0}
		for range 7 {
			w.Pods = append(w.Pods, PodState{Controller: "rs-old", Healthy: true, Ready: true})
		}
		w.Pods = append(w.Pods, PodState{Controller: "rs-new", Failing: true, Onset: t0.Add(-siblings)},
			PodState{Controller: "rs-new", Suspect: true, Onset: t0.Add(-siblings)},
			PodState{Controller: "rs-new", Failing: true, Onset: t0})
		return w
	}
	if bad, total, storm := rollout(30 * time.Second).RevisionStorm(half); !storm || bad != 3 || total != 3 {
		t.Errorf("a new revision failing together: %d of %d, storm %v", bad, total, storm)
	}
	if bad, total, storm := rollout(30 * time.Minute).RevisionStorm(half); storm || bad != 1 || total != 3 {
		t.Errorf("a new revision failing since long before the decided pod: %d of %d, storm %v", bad, total, storm)
	}
}

// The hold message counts the pods that count: "N of M".
func TestFailureStormMessageCountsCorrelatedPods(t *testing.T) {
	f, x := baseFacts()
	f.Workload.Onset = t0
	f.Workload.Pods = pods(10, 10, 8, 0)
	for i := range f.Workload.Pods {
		f.Workload.Pods[i].Onset = t0.Add(-time.Minute)
	}
	// Two failing pods began long before: 6 of 10 count, still a storm.
	f.Workload.Pods[1].Onset, f.Workload.Pods[2].Onset = t0.Add(-time.Hour), t0.Add(-time.Hour)
	d := Decide(f, x, newFakeMemory())
	if d.Outcome != Hold || d.Reason != policyv1alpha1.HoldFailureStorm || !strings.Contains(d.Message, "6 of 10 pods of Deployment/web are failing") {
		t.Fatalf("decision %s %s: %q", d.Outcome, d.Reason, d.Message)
	}
	// Three began long before: 5 of 10, within maxFailing 50%: restarted.
	f.Workload.Pods[3].Onset = t0.Add(-time.Hour)
	if d := Decide(f, x, newFakeMemory()); d.Outcome != Restart {
		t.Fatalf("decision %s %s: %q", d.Outcome, d.Reason, d.Message)
	}
}

// A storm's settling holds the pods of that storm, not a pod whose failures began apart from it:
// old failures storming among themselves, re-decided while held, would otherwise keep the
// workload "settling" for ever and hold every new hang.
func TestSettlingIsACorrelatedOnset(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stormOnset time.Time
		want       Outcome
	}{
		{"the storm last seen began with this pod's failures: it settles", t0.Add(-time.Minute), Hold},
		{"the storm last seen began 20 minutes before: restarted", t0.Add(-20 * time.Minute), Restart},
		{"the storm's onset unknown: it settles", time.Time{}, Hold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, x := baseFacts()
			f.Workload.Onset = t0
			for i := range f.Workload.Pods {
				f.Workload.Pods[i].Onset = t0
			}
			m := newFakeMemory()
			m.lastStorm[webApp], m.stormOnset = t0.Add(-10*time.Second), tc.stormOnset
			d := Decide(f, x, m)
			if d.Outcome != tc.want {
				t.Fatalf("decision %s %s: %q", d.Outcome, d.Reason, d.Message)
			}
			if d.Outcome == Hold && (d.Reason != policyv1alpha1.HoldFailureStorm || !strings.Contains(d.Message, "must settle")) {
				t.Fatalf("held %s: %q", d.Reason, d.Message)
			}
			if d.Seen.WorkloadStorm != StormUnchanged || !d.Seen.WorkloadStormOnset.Equal(t0) {
				t.Fatalf("seen %+v", d.Seen)
			}
		})
	}
}

// The canary of a storm's doubt hold fails again on its new container: a new instance, first seen
// long after the storm began, but the storm going on; it is held and the hold is judged.
func TestACanaryFailingAgainIsTheStormGoingOn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		canary types.UID
		want   Outcome
	}{
		{"the decided pod is the canary: the storm goes on", "pod-0", Hold},
		{"another pod is the canary: a new onset", "pod-1", Restart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, x := baseFacts()
			f.Workload.Pods = pods(10, 10, 7, 0)
			for i := range f.Workload.Pods {
				f.Workload.Pods[i].Onset = t0.Add(-20 * time.Minute)
			}
			// The decided pod's new container failed just now.
			f.Workload.Pods[0].UID, f.Workload.Pods[0].Onset, f.Workload.Onset = "pod-0", t0, t0
			m := newFakeMemory()
			m.stormOnset = t0.Add(-20 * time.Minute)
			m.holds = map[HoldKey]DoubtHold{webApp: {Reason: policyv1alpha1.HoldFailureStorm, Since: t0.Add(-10 * time.Minute), Period: 10 * time.Minute, Touched: t0.Add(-time.Second),
				Canary: &Canary{Pod: tc.canary, PodName: "web-x", Container: "app", Instance: "containerd://old", At: t0.Add(-time.Minute), Deadline: t0.Add(time.Minute)}}}
			d := Decide(f, x, m)
			if d.Outcome != tc.want {
				t.Fatalf("decision %s %s: %q", d.Outcome, d.Reason, d.Message)
			}
			// The canary itself counts: 7 of 10.
			if d.Outcome == Hold && (d.Reason != policyv1alpha1.HoldFailureStorm || !strings.Contains(d.Message, "7 of 10 pods")) {
				t.Fatalf("held %s: %q", d.Reason, d.Message)
			}
			if !f.Workload.Pods[0].Onset.Equal(t0) {
				t.Fatal("the facts are not changed")
			}
		})
	}
}
