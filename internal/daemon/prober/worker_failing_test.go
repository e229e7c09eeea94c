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

package prober

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// Early storm evidence: a run of failures is reported below the threshold from its second
// consecutive failure, with when it began, kept while the run lasts (Failed included), and
// cleared by a success; a run that goes on changes nothing, so it costs no write. A single failed
// run is not reported.
func TestWorker_FailingSinceMarksARunOfFailures(t *testing.T) {
	f := newFixture(t)
	tg := f.target(3)
	w := f.worker(tg)
	f.run(w, 200)
	e := mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
	if !e.FailingSince.IsZero() {
		t.Fatalf("failingSince %v while the probe passes", e.FailingSince)
	}
	drain := func() bool {
		select {
		case <-f.m.Results.Changed():
			return true
		default:
			return false
		}
	}
	drain()
	f.clk.Step(time.Second)
	began := f.clk.Now()
	f.run(w, 500)
	e = mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
	if !e.FailingSince.IsZero() || drain() {
		t.Fatalf("first failure: failingSince %v, a change signalled: one failed run is no evidence", e.FailingSince)
	}
	f.clk.Step(time.Second)
	f.run(w, 500)
	if e = mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded); !e.FailingSince.Equal(began) || !drain() {
		t.Fatalf("second failure: failingSince %v (want %v), a change signalled", e.FailingSince, began)
	}
	f.clk.Step(time.Second)
	f.run(w, 500)
	if e = mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed); !e.FailingSince.Equal(began) {
		t.Fatalf("Failed keeps when the run began: %v", e.FailingSince)
	}
	f.run(w, 200)
	if e = mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded); !e.FailingSince.IsZero() {
		t.Fatalf("recovered: failingSince %v", e.FailingSince)
	}
	f.run(w, 500)
	f.newContainer("containerd://c2")
	f.run(w, 200)
	if e = mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded); !e.FailingSince.IsZero() || e.ContainerID != "containerd://c2" {
		t.Fatalf("a new container starts without a run of failures: %+v", e)
	}
}

// A flaky probe that fails single runs between successes never marks its pod a suspect.
func TestWorker_SingleFailedRunsAreNoEvidence(t *testing.T) {
	f := newFixture(t)
	tg := f.target(3)
	w := f.worker(tg)
	f.run(w, 200)
	for range 5 {
		f.clk.Step(time.Second)
		f.run(w, 500)
		if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded); !e.FailingSince.IsZero() {
			t.Fatalf("a single failed run marked the probe failing since %v", e.FailingSince)
		}
		f.clk.Step(time.Second)
		f.run(w, 200)
	}
}

// With failureThreshold 1 the first failure is the Failed state, and it says when it began.
func TestWorker_ThresholdOneMarksTheFirstFailure(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	f.run(w, 200)
	f.clk.Step(time.Second)
	began := f.clk.Now()
	f.run(w, 500)
	if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed); !e.FailingSince.Equal(began) {
		t.Fatalf("failingSince %v, want %v", e.FailingSince, began)
	}
}

// Only a probe that became Failed is written soon (the status writer's FailureWindow); its
// early mark, recoveries and Unknown states wait for the writer's window.
func TestWorker_FailedIsWrittenSoonEverythingElseInTheWindow(t *testing.T) {
	f := newFixture(t)
	tg := f.target(3)
	w := f.worker(tg)
	signalled := func() (changed, soon bool) {
		select {
		case <-f.m.Results.Changed():
			changed = true
		default:
		}
		select {
		case <-f.m.Results.NewFailure():
			soon = true
		default:
		}
		return changed, soon
	}
	for i, step := range []struct {
		what          string
		code          int // 0: the container stops running
		changed, soon bool
	}{
		{"a new container, then Succeeded", 200, true, false},
		{"a first failure: nothing to write", 500, false, false},
		{"the early failure mark", 500, true, false},
		{"Failed", 500, true, true},
		{"held: nothing new", 500, false, false},
		{"the recovery", 200, true, false},
		{"not running: Unknown", 0, true, false},
	} {
		if step.code == 0 {
			p := f.pod.DeepCopy()
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
			f.setPod(p)
		}
		f.run(w, step.code)
		if changed, soon := signalled(); changed != step.changed || soon != step.soon {
			t.Errorf("step %d, %s: changed %v, soon %v; want %v, %v", i, step.what, changed, soon, step.changed, step.soon)
		}
	}
}
