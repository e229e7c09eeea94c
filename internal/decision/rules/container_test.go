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
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// twoContainers is baseFacts with an app and a side container in each of the 10 pods: the
// side container fails in sideFailing of them, the app container in appFailing (pod 0 first).
func twoContainers(sideFailing, appFailing int) (*Facts, Failure) {
	f, x := baseFacts()
	for i := range f.Workload.Pods {
		p := &f.Workload.Pods[i]
		p.UID = types.UID(fmt.Sprint("pod-", i))
		app := ContainerState{Name: "app", Healthy: i >= appFailing, Failing: i < appFailing, Running: fmt.Sprint("containerd://app-", i)}
		side := ContainerState{Name: "side", Healthy: i >= sideFailing, Failing: i < sideFailing, Running: fmt.Sprint("containerd://side-", i)}
		p.Containers = []ContainerState{app, side}
		p.Failing, p.Healthy = app.Failing || side.Failing, !app.Failing && !side.Failing
	}
	f.Self = f.Workload.Pods[0]
	x.ContainerID, x.Running = "containerd://app-0", "containerd://app-0"
	return f, x
}

// Evidence, storms and the breaker are judged per container: a sidecar failing on every replica
// is no storm of the app container beside it, nor are its restarts the app's.
func TestJudgedPerContainer(t *testing.T) {
	cases := []struct {
		name    string
		facts   func() (*Facts, Failure)
		mutate  func(*Facts, *fakeMemory)
		outcome Outcome
		reason  policyv1alpha1.HoldReason
	}{
		{"a sidecar failing on all 10 pods, the app hangs in one: restarted", func() (*Facts, Failure) { return twoContainers(10, 1) },
			nil, Restart, ""},
		{"the app failing in 6 of 10: the app's storm", func() (*Facts, Failure) { return twoContainers(0, 6) },
			nil, Hold, policyv1alpha1.HoldFailureStorm},
		{"the sidecar's failure in a storm of sidecars: held", func() (*Facts, Failure) {
			f, x := twoContainers(10, 1)
			x.Container, x.ContainerID, x.Running = "side", "containerd://side-0", "containerd://side-0"
			return f, x
		}, nil, Hold, policyv1alpha1.HoldFailureStorm},
		{"the sidecar's restarts did not help: no breaker for the app", func() (*Facts, Failure) { return twoContainers(10, 1) },
			func(_ *Facts, m *fakeMemory) {
				m.restarts = []RestartRecord{
					{RestartID: RestartID{Pod: "pod-1", Container: "side", At: t0}, Ineffective: true},
					{RestartID: RestartID{Pod: "pod-2", Container: "side", At: t0}, Ineffective: true},
				}
			}, Restart, ""},
		{"the app's restarts did not help in two pods: the app's breaker", func() (*Facts, Failure) { return twoContainers(0, 1) },
			func(_ *Facts, m *fakeMemory) {
				m.restarts = []RestartRecord{
					{RestartID: RestartID{Pod: "pod-1", Container: "app", At: t0}, Ineffective: true},
					{RestartID: RestartID{Pod: "pod-2", Container: "app", At: t0}, Ineffective: true},
				}
			}, Hold, policyv1alpha1.HoldRestartIneffective},
		{"the sidecar's storm holds are the sidecar key's, not the app's", func() (*Facts, Failure) { return twoContainers(10, 1) },
			func(_ *Facts, m *fakeMemory) {
				m.holds[HoldKey{Workload: web, Container: "side"}] = DoubtHold{Reason: policyv1alpha1.HoldFailureStorm, Onset: t0, Since: t0, Period: time.Hour}
				m.lastStorm[HoldKey{Workload: web, Container: "side"}] = t0
			}, Restart, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, x := tc.facts()
			m := newFakeMemory()
			if tc.mutate != nil {
				tc.mutate(f, m)
			}
			d := Decide(f, x, m)
			if d.Outcome != tc.outcome || d.Reason != tc.reason {
				t.Fatalf("got %s %s, want %s %s (%s)", d.Outcome, d.Reason, tc.outcome, tc.reason, d.Message)
			}
			if d.Key != (HoldKey{Workload: web, Container: x.Container}) {
				t.Fatalf("key %v", d.Key)
			}
		})
	}
}

// The policy status sees a storm of any container, as a decision of that container does.
func TestJudgeWorkloadPerContainer(t *testing.T) {
	p := &Policy{MaxFailing: baseFactsPolicy().MaxFailing}
	f, _ := twoContainers(10, 1)
	if v := JudgeWorkload(f.Workload, p, WorkloadHolds{}, 0, t0); !v.Storm {
		t.Errorf("the sidecar storms: %+v", v)
	}
	f, _ = twoContainers(3, 3)
	if v := JudgeWorkload(f.Workload, p, WorkloadHolds{}, 0, t0); v.Storm {
		t.Errorf("3 of 10 of each container is no storm: %+v", v)
	}
}

func baseFactsPolicy() Policy {
	f, _ := baseFacts()
	return f.Policies[0]
}

// Every budget hold ends: unavailability the operator is not causing (siblings not ready by
// themselves, Pending or held by choice, replicas the workload has not created) stops counting
// maxHold after the key's hold onset. Unavailability the operator causes (its own restarts,
// active, expected or recovering) counts as ever.
func TestBudgetHoldsEnd(t *testing.T) {
	const maxHold = 10 * time.Minute
	// 4 replicas, maxUnavailable 25% = 1; pod 3 is unavailable, or missing when nil.
	setup := func(stuck *PodState) (*Facts, Failure) {
		f, x := baseFacts()
		f.Policies[0].MaxHold = maxHold
		f.Workload.Desired = 4
		f.Workload.Pods = pods(4, 4, 1, 0)
		f.Workload.Pods[0].UID = "pod-0"
		if stuck == nil {
			f.Workload.Pods = f.Workload.Pods[:3]
		} else {
			s := *stuck
			s.UID = "pod-3"
			f.Workload.Pods[3] = s
		}
		f.Self = f.Workload.Pods[0]
		return f, x
	}
	notReady := &PodState{Healthy: true}
	budgetHold := DoubtHold{Reason: policyv1alpha1.HoldMaxUnavailable, Onset: t0.Add(-maxHold), Since: t0.Add(-maxHold), Period: maxHold}
	recent := DoubtHold{Reason: policyv1alpha1.HoldMaxUnavailable, Onset: t0.Add(-time.Minute), Since: t0.Add(-time.Minute), Period: maxHold}
	const podsNote = "1 of them the operator will not restart (pods not ready by themselves, Pending or held by choice): they stop counting at "
	cases := []struct {
		name     string
		stuck    *PodState
		expected bool // the memory expects a request of pod 3
		hold     *DoubtHold
		outcome  Outcome
		begins   bool   // a key hold begins now
		message  string // in the hold's message
	}{
		{"behind a pod that is merely not ready (or Pending): held, and the hold's clock starts", notReady, false, nil, Hold, true, podsNote + "2026"},
		{"behind a pod that is merely not ready: held until maxHold after the onset", notReady, false, &recent, Hold, false,
			podsNote + stamp.Seconds(t0.Add(maxHold-time.Minute))},
		{"behind a pod that is merely not ready: ends after maxHold", notReady, false, &budgetHold, Restart, false, ""},
		{"behind a missing replica: held, and the hold's clock starts", nil, false, nil, Hold, true,
			"1 of them the operator will not restart (replicas the workload has not created): they stop counting at "},
		{"behind a missing replica: ends after maxHold", nil, false, &budgetHold, Restart, false, ""},
		{"behind a pod being restarted: held", &PodState{ActiveCRR: true}, false, &budgetHold, Hold, false, ""},
		{"behind a pod whose request the memory expects: held", notReady, true, &budgetHold, Hold, false, ""},
		{"behind a pod recovering from its restart: held", &PodState{Recovering: true}, false, &budgetHold, Hold, false, ""},
		{"behind a pod not ready, the key's doubt hold began maxHold ago: restarted", notReady, false,
			&DoubtHold{Reason: policyv1alpha1.HoldFailureStorm, Onset: t0.Add(-maxHold), Since: t0.Add(-time.Minute), Period: 2 * time.Minute}, Restart, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, x := setup(tc.stuck)
			m := newFakeMemory()
			if tc.hold != nil {
				m.holds[webApp] = *tc.hold
			}
			if tc.expected {
				m.expected["pod-3"] = "web-3-app-1"
			}
			d := Decide(f, x, m)
			if d.Outcome != tc.outcome {
				t.Fatalf("got %s %s, want %s (%s)", d.Outcome, d.Reason, tc.outcome, d.Message)
			}
			if d.Outcome == Hold && d.Reason != policyv1alpha1.HoldMaxUnavailable {
				t.Fatalf("held %s (%s)", d.Reason, d.Message)
			}
			if !strings.Contains(d.Message, tc.message) {
				t.Fatalf("message %q, want it to say %q", d.Message, tc.message)
			}
			begun := d.Seen.Hold != nil && d.Seen.Hold.Onset.Equal(t0)
			if begun != tc.begins {
				t.Fatalf("a hold begins: %v, want %v (%+v)", begun, tc.begins, d.Seen.Hold)
			}
			if tc.begins && (d.Seen.Hold.Reason != policyv1alpha1.HoldMaxUnavailable || d.RequeueAfter != maxHold) {
				t.Fatalf("the budget hold %+v, decided again in %s", d.Seen.Hold, d.RequeueAfter)
			}
		})
	}
}

// The message says how many of the unavailable the operator will not restart, and what they are.
func TestNotRestarting(t *testing.T) {
	for _, tc := range []struct {
		n, missing int32
		want       string
	}{
		{2, 0, "pods not ready by themselves, Pending or held by choice"},
		{2, 2, "replicas the workload has not created"},
		{3, 1, "replicas the workload has not created (1), and pods not ready by themselves, Pending or held by choice"},
	} {
		if got := notRestarting(tc.n, tc.missing); got != tc.want {
			t.Errorf("notRestarting(%d, %d) = %q, want %q", tc.n, tc.missing, got, tc.want)
		}
	}
}
