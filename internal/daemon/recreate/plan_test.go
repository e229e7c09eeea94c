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

package recreate

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ctr(name, id string) appsv1alpha1.ContainerRecreateRequestContainer {
	c := appsv1alpha1.ContainerRecreateRequestContainer{Name: name}
	if id != "" {
		c.StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: id}
	}
	return c
}

func running(id string, startedAgo time.Duration) Observed {
	return Observed{InSpec: true, RestartPolicy: corev1.RestartPolicyAlways, ContainerID: id, Running: true,
		Started: true, StartedAt: t0.Add(-startedAgo), RuntimeRunning: true}
}

func state(name string, phase appsv1alpha1.ContainerRecreateRequestPhase, id string, killed bool) appsv1alpha1.ContainerRecreateState {
	return appsv1alpha1.ContainerRecreateState{Name: name, Phase: phase, ContainerID: id, IsKilled: killed, Message: "earlier"}
}

const (
	pending    = appsv1alpha1.RecreatePending
	recreating = appsv1alpha1.RecreateRecreating
	succeeded  = appsv1alpha1.RecreateSucceeded
	failedP    = appsv1alpha1.RecreateFailed
)

func TestAdvance(t *testing.T) {
	never := running("c://old", time.Minute)
	never.RestartPolicy = corev1.RestartPolicyNever
	onFailure := running("c://old", time.Minute)
	onFailure.RestartPolicy = corev1.RestartPolicyOnFailure
	exitedZero := Observed{InSpec: true, RestartPolicy: corev1.RestartPolicyOnFailure, ContainerID: "c://old"}
	unconfirmed := running("c://new", time.Minute)
	unconfirmed.RuntimeRunning = false
	notStarted := running("c://new", time.Minute)
	notStarted.Started = false
	stopped := Observed{InSpec: true, RestartPolicy: corev1.RestartPolicyAlways, ContainerID: "c://old"}

	cases := []struct {
		name       string
		containers []appsv1alpha1.ContainerRecreateRequestContainer
		strategy   appsv1alpha1.ContainerRecreateRequestStrategy
		states     []appsv1alpha1.ContainerRecreateState
		obs        map[string]Observed
		now        time.Time // default t0
		wantKill   []string
		wantPhase  appsv1alpha1.ContainerRecreateRequestPhase
		wantStates []appsv1alpha1.ContainerRecreateState // phase, containerID, isKilled compared
		wantMsg    string                                // substring of the request message
		wantWait   time.Duration
	}{
		{name: "first sight: stop the recorded instance",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			obs:        map[string]Observed{"app": running("c://old", time.Minute)},
			wantKill:   []string{"app"}, wantPhase: recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", false)}},
		{name: "already restarted: counts without a stop",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			obs:        map[string]Observed{"app": running("c://new", time.Minute)},
			wantPhase:  succeeded,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", succeeded, "c://old", false)}},
		{name: "forceRecreate stops the replacement too",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			strategy:   appsv1alpha1.ContainerRecreateRequestStrategy{ForceRecreate: true},
			obs:        map[string]Observed{"app": running("c://new", time.Minute)},
			wantKill:   []string{"app"}, wantPhase: recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://new", false)}},
		{name: "forceRecreate waits for an instance to stop",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			strategy:   appsv1alpha1.ContainerRecreateRequestStrategy{ForceRecreate: true},
			obs:        map[string]Observed{"app": {InSpec: true, RestartPolicy: corev1.RestartPolicyAlways}},
			wantPhase:  recreating, wantMsg: "waiting for the container to run",
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", pending, "", false)}},
		{name: "no statusContext: the current instance is the target",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "")},
			obs:        map[string]Observed{"app": running("c://cur", time.Minute)},
			wantKill:   []string{"app"}, wantPhase: recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://cur", false)}},
		{name: "stopped, pod status not caught up: wait, no second stop",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)},
			obs:        map[string]Observed{"app": running("c://old", time.Minute)},
			wantPhase:  recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)}},
		{name: "recorded but not stopped (daemon restarted mid-way): stop again",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", false)},
			obs:        map[string]Observed{"app": running("c://old", time.Minute)},
			wantKill:   []string{"app"}, wantPhase: recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", false)}},
		{name: "stopped instance exited, nothing new yet: wait",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)},
			obs:        map[string]Observed{"app": stopped},
			wantPhase:  recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)}},
		{name: "new instance running and confirmed: succeeded",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)},
			obs:        map[string]Observed{"app": running("c://new", 0)},
			wantPhase:  succeeded, wantMsg: "all 1 container(s) restarted",
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", succeeded, "c://old", true)}},
		{name: "new instance not confirmed by the runtime: wait",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)},
			obs:        map[string]Observed{"app": unconfirmed},
			wantPhase:  recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)}},
		{name: "new instance not started (startup probe): wait",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)},
			obs:        map[string]Observed{"app": notStarted},
			wantPhase:  recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)}},
		{name: "minStartedSeconds not reached: wait for the rest",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			strategy:   appsv1alpha1.ContainerRecreateRequestStrategy{MinStartedSeconds: 10},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)},
			obs:        map[string]Observed{"app": running("c://new", 3*time.Second)},
			wantPhase:  recreating, wantWait: 7 * time.Second, wantMsg: "minStartedSeconds (10)",
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)}},
		{name: "minStartedSeconds reached: succeeded",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			strategy:   appsv1alpha1.ContainerRecreateRequestStrategy{MinStartedSeconds: 10},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)},
			obs:        map[string]Observed{"app": running("c://new", 10*time.Second)},
			wantPhase:  succeeded,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", succeeded, "c://old", true)}},
		{name: "restartPolicy Never is refused",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			obs:        map[string]Observed{"app": never},
			wantPhase:  failedP, wantMsg: "container app: restartPolicy is Never",
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", failedP, "", false)}},
		{name: "OnFailure is refused before any stop: an exit 0 on SIGTERM would leave it stopped",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			obs:        map[string]Observed{"app": onFailure},
			wantPhase:  failedP, wantMsg: "container app: restartPolicy is OnFailure: the kubelet would not start the container again after a stop",
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", failedP, "", false)}},
		{name: "OnFailure, stopped by an earlier version: failed, not waited for",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)},
			obs:        map[string]Observed{"app": exitedZero},
			wantPhase:  failedP, wantMsg: "restartPolicy is OnFailure",
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", failedP, "c://old", true)}},
		{name: "unknown container fails the request",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("ghost", "c://x")},
			obs:        map[string]Observed{},
			wantPhase:  failedP, wantMsg: `container ghost: the pod has no container named "ghost"`,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("ghost", failedP, "", false)}},
		{name: "ordered: only the first is stopped",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("a", "c://a1"), ctr("b", "c://b1")},
			strategy:   appsv1alpha1.ContainerRecreateRequestStrategy{OrderedRecreate: true},
			obs:        map[string]Observed{"a": running("c://a1", time.Minute), "b": running("c://b1", time.Minute)},
			wantKill:   []string{"a"}, wantPhase: recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("a", recreating, "c://a1", false), state("b", pending, "", false)}},
		{name: "ordered: the next one once the first runs again",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("a", "c://a1"), ctr("b", "c://b1")},
			strategy:   appsv1alpha1.ContainerRecreateRequestStrategy{OrderedRecreate: true},
			states:     []appsv1alpha1.ContainerRecreateState{state("a", recreating, "c://a1", true), state("b", pending, "", false)},
			obs:        map[string]Observed{"a": running("c://a2", 0), "b": running("c://b1", time.Minute)},
			wantKill:   []string{"b"}, wantPhase: recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("a", succeeded, "c://a1", true), state("b", recreating, "c://b1", false)}},
		{name: "unordered: all at once",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("a", "c://a1"), ctr("b", "c://b1")},
			obs:        map[string]Observed{"a": running("c://a1", time.Minute), "b": running("c://b1", time.Minute)},
			wantKill:   []string{"a", "b"}, wantPhase: recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("a", recreating, "c://a1", false), state("b", recreating, "c://b1", false)}},
		{name: "failurePolicy Fail: a bad container stops everything, nothing is stopped",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("a", "c://a1"), ctr("ghost", "c://x")},
			obs:        map[string]Observed{"a": running("c://a1", time.Minute)},
			wantPhase:  failedP, wantMsg: "container ghost:",
			wantStates: []appsv1alpha1.ContainerRecreateState{state("a", pending, "", false), state("ghost", failedP, "", false)}},
		{name: "failurePolicy Ignore: carry on with the others",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("a", "c://a1"), ctr("ghost", "c://x")},
			strategy:   appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1alpha1.FailurePolicyIgnore},
			obs:        map[string]Observed{"a": running("c://a1", time.Minute)},
			wantKill:   []string{"a"}, wantPhase: recreating,
			wantStates: []appsv1alpha1.ContainerRecreateState{state("a", recreating, "c://a1", false), state("ghost", failedP, "", false)}},
		{name: "failurePolicy Ignore: finished with the ignored failure named",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("a", "c://a1"), ctr("ghost", "c://x")},
			strategy:   appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1alpha1.FailurePolicyIgnore},
			states:     []appsv1alpha1.ContainerRecreateState{state("a", recreating, "c://a1", true), state("ghost", failedP, "", false)},
			obs:        map[string]Observed{"a": running("c://a2", 0)},
			wantPhase:  succeeded, wantMsg: "not restarted (failurePolicy Ignore): ghost:",
			wantStates: []appsv1alpha1.ContainerRecreateState{state("a", succeeded, "c://a1", true), state("ghost", failedP, "", false)}},
		{name: "deadline passed: nothing stopped, not failed either (the manager owns timeouts)",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("app", pending, "", false)},
			obs:        map[string]Observed{"app": running("c://old", time.Minute)},
			now:        t0.Add(time.Minute),
			wantPhase:  recreating, wantMsg: "container app:",
			wantStates: []appsv1alpha1.ContainerRecreateState{state("app", pending, "", false)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.now
			if now.IsZero() {
				now = t0
			}
			p := Advance(Observation{Containers: tc.containers, Strategy: tc.strategy, States: tc.states, Observed: tc.obs,
				Now: now, Deadline: t0.Add(time.Minute)})
			if strings.Join(p.Kill, ",") != strings.Join(tc.wantKill, ",") {
				t.Errorf("Kill = %v, want %v", p.Kill, tc.wantKill)
			}
			if p.Phase != tc.wantPhase || !strings.Contains(p.Message, tc.wantMsg) {
				t.Errorf("phase %q message %q; want %q containing %q", p.Phase, p.Message, tc.wantPhase, tc.wantMsg)
			}
			if p.RequeueAfter != tc.wantWait {
				t.Errorf("RequeueAfter = %v, want %v", p.RequeueAfter, tc.wantWait)
			}
			if len(p.States) != len(tc.wantStates) {
				t.Fatalf("states = %+v, want %+v", p.States, tc.wantStates)
			}
			for i, w := range tc.wantStates {
				g := p.States[i]
				if g.Name != w.Name || g.Phase != w.Phase || g.ContainerID != w.ContainerID || g.IsKilled != w.IsKilled {
					t.Errorf("state %d = %+v, want %+v", i, g, w)
				}
				if g.Message == "" {
					t.Errorf("state %d has no message", i)
				}
			}
		})
	}
}

func TestSucceededMessageSaysWhetherStopped(t *testing.T) {
	c := []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")}
	p := Advance(Observation{Containers: c, Observed: map[string]Observed{"app": running("c://new", 0)}, Now: t0, Deadline: t0.Add(time.Hour)})
	if !strings.Contains(p.States[0].Message, "not stopped: c://old had already been replaced; new container c://new running") {
		t.Errorf("message = %q", p.States[0].Message)
	}
	p = Advance(Observation{Containers: c, States: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)},
		Observed: map[string]Observed{"app": running("c://new", 0)}, Now: t0, Deadline: t0.Add(time.Hour)})
	if p.States[0].Message != "stopped c://old; new container c://new running" {
		t.Errorf("message = %q", p.States[0].Message)
	}
}

func TestStopMessageKeptWhileWaiting(t *testing.T) {
	st := state("app", recreating, "c://old", true)
	st.Message = "stopped c://old with a grace period of 7s; waiting for the kubelet to start a new container"
	p := Advance(Observation{Containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")},
		States: []appsv1alpha1.ContainerRecreateState{st}, Observed: map[string]Observed{"app": running("c://old", time.Minute)},
		Now: t0, Deadline: t0.Add(time.Hour)})
	if p.States[0].Message != st.Message {
		t.Errorf("message = %q, want %q", p.States[0].Message, st.Message)
	}
}

func TestSummarizeReportsFirstWaitingContainer(t *testing.T) {
	states := []appsv1alpha1.ContainerRecreateState{
		{Name: "a", Phase: succeeded, Message: "ok"},
		{Name: "b", Phase: recreating, Message: "stopping c://b"},
	}
	phase, msg := Summarize(appsv1alpha1.FailurePolicyFail, states)
	if phase != recreating || msg != "container b: stopping c://b" {
		t.Errorf("got %q %q", phase, msg)
	}
}

// A stop in flight is recorded as such in the status from before it begins until it returned,
// whatever the deadline: the manager and the decision read it (ContainerRecreateRequest.StopInFlight).
func TestAdvanceStopInFlight(t *testing.T) {
	inFlight := func(name, id string) appsv1alpha1.ContainerRecreateState {
		st := state(name, recreating, id, false)
		st.Message, st.StopInFlight = "stopping "+id, true
		return st
	}
	runningStop := map[string]stopMemo{"c://old": {running: true}}
	returnedWith := func(o stopOutcome, msg string) map[string]stopMemo {
		return map[string]stopMemo{"c://old": {result: &stopResult{outcome: o, message: msg}}}
	}
	app := []appsv1alpha1.ContainerRecreateRequestContainer{ctr("app", "c://old")}
	late := t0.Add(time.Minute + time.Second)
	cases := []struct {
		name         string
		containers   []appsv1alpha1.ContainerRecreateRequestContainer
		states       []appsv1alpha1.ContainerRecreateState
		obs          map[string]Observed
		stops        map[string]stopMemo
		now          time.Time // default t0; the deadline is t0 + 1 min
		wantKill     []string
		wantLeave    bool
		wantAwait    bool
		wantPhase    appsv1alpha1.ContainerRecreateRequestPhase
		wantInFlight []bool
		wantKilled   []bool
		wantMsg      string // substring of the first state's message
		wantRecorded []string
	}{
		{name: "a stop about to begin is recorded in flight",
			containers: app, obs: map[string]Observed{"app": running("c://old", time.Minute)},
			wantKill: []string{"app"}, wantPhase: recreating, wantInFlight: []bool{true}, wantKilled: []bool{false}},
		{name: "a stop that has not returned stays in flight and is not begun again",
			containers: app, states: []appsv1alpha1.ContainerRecreateState{inFlight("app", "c://old")},
			obs: map[string]Observed{"app": running("c://old", time.Minute)}, stops: runningStop,
			wantPhase: recreating, wantInFlight: []bool{true}, wantKilled: []bool{false}},
		{name: "a stop that went through is no longer in flight",
			containers: app, states: []appsv1alpha1.ContainerRecreateState{inFlight("app", "c://old")},
			obs: map[string]Observed{"app": running("c://old", time.Minute)}, stops: returnedWith(stopped, "stopped c://old"),
			wantPhase: recreating, wantInFlight: []bool{false}, wantKilled: []bool{true}, wantMsg: "stopped c://old"},
		{name: "a stop that returned an error is no longer in flight",
			containers: app, states: []appsv1alpha1.ContainerRecreateState{inFlight("app", "c://old")},
			obs: map[string]Observed{"app": running("c://old", time.Minute)}, stops: returnedWith(stopFailed, "stopping c://old failed: boom"),
			wantPhase: failedP, wantInFlight: []bool{false}, wantKilled: []bool{false}, wantMsg: "failed: boom",
			wantRecorded: []string{"c://old"}},
		{name: "deadline passed, stop in flight: nothing written, the return awaited",
			containers: app, states: []appsv1alpha1.ContainerRecreateState{inFlight("app", "c://old")}, stops: runningStop, now: late,
			wantLeave: true, wantAwait: true, wantPhase: recreating, wantInFlight: []bool{true}, wantKilled: []bool{false}},
		{name: "deadline passed, the stop went through: its return is written, nothing more",
			containers: app, states: []appsv1alpha1.ContainerRecreateState{inFlight("app", "c://old")},
			stops: returnedWith(stopped, "stopped c://old with a grace period of 30s"), now: late,
			wantPhase: recreating, wantInFlight: []bool{false}, wantKilled: []bool{true}, wantMsg: "grace period of 30s",
			wantRecorded: []string{"c://old"}},
		{name: "deadline passed, the stop timed out in the runtime: its return is written, not retried",
			containers: app, states: []appsv1alpha1.ContainerRecreateState{inFlight("app", "c://old")},
			obs:   map[string]Observed{"app": running("c://old", time.Minute)},
			stops: returnedWith(stopRetry, "stopping c://old failed, will retry: DeadlineExceeded"), now: late,
			wantPhase: recreating, wantInFlight: []bool{false}, wantKilled: []bool{false}, wantMsg: "DeadlineExceeded",
			wantRecorded: []string{"c://old"}},
		{name: "deadline passed, the stop was begun by an earlier daemon process: no longer awaited",
			containers: app, states: []appsv1alpha1.ContainerRecreateState{inFlight("app", "c://old")}, now: late,
			wantPhase: recreating, wantInFlight: []bool{false}, wantKilled: []bool{false}, wantMsg: "daemon restarted while stopping c://old"},
		{name: "deadline passed, nothing in flight: left alone",
			containers: app, states: []appsv1alpha1.ContainerRecreateState{state("app", recreating, "c://old", true)}, now: late,
			wantLeave: true, wantPhase: recreating, wantInFlight: []bool{false}, wantKilled: []bool{true}},
		{name: "failurePolicy Fail while another container's stop is in flight: not finished until it returned",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("ghost", "c://x"), ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("ghost", failedP, "", false), inFlight("app", "c://old")},
			obs:        map[string]Observed{"app": running("c://old", time.Minute)}, stops: runningStop,
			wantPhase: recreating, wantInFlight: []bool{false, true}, wantKilled: []bool{false, false}},
		{name: "failurePolicy Fail, the other container's stop returned: failed",
			containers: []appsv1alpha1.ContainerRecreateRequestContainer{ctr("ghost", "c://x"), ctr("app", "c://old")},
			states:     []appsv1alpha1.ContainerRecreateState{state("ghost", failedP, "", false), inFlight("app", "c://old")},
			obs:        map[string]Observed{"app": running("c://old", time.Minute)}, stops: returnedWith(stopped, "stopped c://old"),
			wantPhase: failedP, wantInFlight: []bool{false, false}, wantKilled: []bool{false, true}, wantRecorded: []string{"c://old"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.now
			if now.IsZero() {
				now = t0
			}
			p := Advance(Observation{Containers: tc.containers, States: tc.states, Observed: tc.obs, Stops: tc.stops,
				FirstSeen: t0.Add(-time.Hour), Now: now, Deadline: t0.Add(time.Minute)})
			if strings.Join(p.Kill, ",") != strings.Join(tc.wantKill, ",") {
				t.Errorf("Kill = %v, want %v", p.Kill, tc.wantKill)
			}
			if (p.Leave != "") != tc.wantLeave || p.AwaitStop != tc.wantAwait {
				t.Errorf("Leave = %q AwaitStop = %v, want leave %v await %v", p.Leave, p.AwaitStop, tc.wantLeave, tc.wantAwait)
			}
			if p.Phase != tc.wantPhase {
				t.Errorf("phase %q (%s), want %q", p.Phase, p.Message, tc.wantPhase)
			}
			if strings.Join(p.Recorded, ",") != strings.Join(tc.wantRecorded, ",") {
				t.Errorf("Recorded = %v, want %v", p.Recorded, tc.wantRecorded)
			}
			if len(p.States) != len(tc.wantInFlight) {
				t.Fatalf("states = %+v, want %d", p.States, len(tc.wantInFlight))
			}
			for i, s := range p.States {
				if s.StopInFlight != tc.wantInFlight[i] || s.IsKilled != tc.wantKilled[i] {
					t.Errorf("state %s: stopInFlight %v isKilled %v, want %v %v", s.Name, s.StopInFlight, s.IsKilled,
						tc.wantInFlight[i], tc.wantKilled[i])
				}
			}
			if !strings.Contains(p.States[len(p.States)-1].Message, tc.wantMsg) {
				t.Errorf("message %q, want it to contain %q", p.States[len(p.States)-1].Message, tc.wantMsg)
			}
		})
	}
	// The request that waits for the other container's stop says so.
	p := Advance(Observation{Containers: cases[9].containers, States: cases[9].states, Observed: cases[9].obs,
		Stops: runningStop, FirstSeen: t0.Add(-time.Hour), Now: t0, Deadline: t0.Add(time.Minute)})
	if !strings.Contains(p.Message, "the request ends once the stop of container app returned") {
		t.Errorf("message %q", p.Message)
	}
}
