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
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestWorker_6_NoProbeBeforeInitialDelayFromContainerStart(t *testing.T) {
	f := newFixture(t)
	f.newContainer("containerd://c1") // started now
	tg := f.target(3)
	tg.Probe.InitialDelaySeconds = 10
	w := f.worker(tg)
	f.run(w, 200)
	f.clk.Step(9 * time.Second)
	f.run(w, 200)
	if n := f.requests.Load(); n != 0 {
		t.Fatalf("%d probes before initialDelaySeconds", n)
	}
	f.clk.Step(time.Second)
	f.run(w, 200)
	if n := f.requests.Load(); n != 1 {
		t.Fatalf("%d probes once the delay passed, want 1", n)
	}
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
}

func TestWorker_7_FirstRunSpreadWithinOnePeriodOfDaemonStart(t *testing.T) {
	f := newFixture(t)
	f.m.started = f.clk.Now()
	f.m.Jitter = func(p time.Duration) time.Duration {
		if p != 10*time.Second {
			t.Errorf("jitter asked for period %v", p)
		}
		return 4 * time.Second
	}
	w := f.worker(f.target(3))
	w.start(context.Background())
	defer w.stop()
	waitFor(t, f.clk.HasWaiters)
	f.clk.Step(3 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := f.requests.Load(); n != 0 {
		t.Fatalf("probe ran %d times before its spread delay", n)
	}
	f.clk.Step(time.Second)
	waitFor(t, func() bool { return f.requests.Load() == 1 })
}

func TestWorker_7_FirstRunImmediateLongAfterDaemonStart(t *testing.T) {
	f := newFixture(t)
	f.m.started = f.clk.Now().Add(-11 * time.Second)
	f.m.Jitter = func(time.Duration) time.Duration { t.Error("jitter used after the first period"); return 0 }
	w := f.worker(f.target(3))
	w.start(context.Background())
	defer w.stop()
	waitFor(t, func() bool { return f.requests.Load() == 1 })
}

func TestWorker_7_PeriodChangeAppliesWithoutRestart(t *testing.T) {
	f := newFixture(t)
	tg := f.target(3)
	w := f.worker(tg)
	w.start(context.Background())
	defer w.stop()
	waitFor(t, func() bool { return f.requests.Load() == 1 && f.clk.HasWaiters() })
	f.clk.Step(10 * time.Second)
	waitFor(t, func() bool { return f.requests.Load() == 2 && f.clk.HasWaiters() })

	tg.Probe.PeriodSeconds = 2
	w.setTarget(&tg)
	// The new period counts from the last run: 2 s later, not 10.
	waitFor(t, f.clk.HasWaiters)
	f.clk.Step(2 * time.Second)
	waitFor(t, func() bool { return f.requests.Load() == 3 && f.clk.HasWaiters() })
	f.clk.Step(2 * time.Second)
	waitFor(t, func() bool { return f.requests.Load() == 4 })
}

func TestWorker_8_FailureOnlyWhenRunReachesThreshold(t *testing.T) {
	f := newFixture(t)
	tg := f.target(3)
	w := f.worker(tg)
	for _, code := range []int{500, 500, 200, 500, 500} {
		f.run(w, code)
	}
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded) // F,F,S,F,F: no failure
	f.run(w, 500)
	e := mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed) // the third F in a row
	if e.Message != "HTTP probe failed with statuscode: 500" {
		t.Errorf("message %q", e.Message)
	}
}

func TestWorker_9_DeltaAfterFailureOnlyRecoveryIsReported(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	f.run(w, 500)
	mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed)
	if ev := f.events(); len(ev) != 1 {
		t.Fatalf("events after the failure: %q, want one Unhealthy", ev)
	}
	failedAt := mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed).LastTransitionTime

	// The restart is held: the same container keeps failing. It is still probed, but nothing new
	// is reported: same state, same transition time, no event.
	for range 5 {
		f.clk.Step(10 * time.Second)
		f.run(w, 500)
	}
	if n := f.requests.Load(); n != 6 {
		t.Fatalf("%d probes while the failed container keeps running, want 6", n)
	}
	e := mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed)
	if !e.LastTransitionTime.Equal(failedAt) {
		t.Errorf("repeated failures moved lastTransitionTime: %v -> %v", failedAt, e.LastTransitionTime)
	}
	if ev := f.events(); len(ev) != 0 {
		t.Fatalf("events for repeated failures of a held container: %q", ev)
	}

	// It recovers without a restart: reported, so that a held restart (storm) can clear.
	f.run(w, 200)
	e = mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
	if e.ContainerID != "containerd://c1" {
		t.Errorf("recovery reported on %q", e.ContainerID)
	}
	// A later failure is a new one: reported with its event.
	f.run(w, 500)
	mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed)
	if ev := f.events(); len(ev) != 1 {
		t.Fatalf("events for a new failure after recovery: %q, want one", ev)
	}

	// A new container is probed from scratch.
	f.newContainer("containerd://c2")
	f.run(w, 200)
	e = mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
	if e.ContainerID != "containerd://c2" {
		t.Errorf("after the new container: %+v", e)
	}
}

func TestWorker_10_DeltaCountersResetOnNewContainer(t *testing.T) {
	f := newFixture(t)
	tg := f.target(3)
	w := f.worker(tg)
	f.run(w, 500)
	f.run(w, 500)
	f.newContainer("containerd://c2")
	f.run(w, 500) // the kubelet would count this as the third failure and kill c2
	if e, _ := f.state(tg.Key); e.State == appsv1alpha1.ProbeFailed {
		t.Fatalf("a fresh container failed on its first failure: %+v", e)
	}
	f.run(w, 500)
	f.run(w, 500)
	mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed)
}

func TestWorker_11_ContainerNotRunningIsNeverFailed(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	p := f.pod.DeepCopy()
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	f.setPod(p)
	for range 3 {
		if !f.run(w, 500) {
			t.Fatal("worker stopped")
		}
	}
	if n := f.requests.Load(); n != 0 {
		t.Fatalf("%d probes of a container that is not running", n)
	}
	e := mustState(t, f, tg.Key, appsv1alpha1.ProbeUnknown)
	if e.Message != MessageNotRunning || e.ContainerID != "containerd://c1" {
		t.Errorf("entry %+v", e)
	}
}

func TestWorker_12_TerminatingPodStopsWorkerWithoutFailure(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	p := f.pod.DeepCopy()
	p.DeletionTimestamp = ptr.To(metav1.NewTime(f.clk.Now()))
	f.setPod(p)
	if f.run(w, 500) {
		t.Fatal("worker kept running for a terminating pod")
	}
	if e, ok := f.state(tg.Key); ok && e.State == appsv1alpha1.ProbeFailed {
		t.Fatalf("failure reported for a terminating pod: %+v", e)
	}
	if f.requests.Load() != 0 {
		t.Fatal("probed a terminating pod")
	}

	// Sync gives a terminating pod's probe no worker at all.
	ctx := t.Context()
	m := &Manager{UserAgent: "kube-probe/1.37", Clock: f.clk}
	go func() { _ = m.Start(ctx) }()
	waitFor(t, func() bool { m.mu.RLock(); defer m.mu.RUnlock(); return m.ctx != nil })
	m.Sync([]Target{tg}, []*corev1.Pod{p})
	if n := m.WorkerCount(); n != 0 {
		t.Errorf("%d workers for a terminating pod", n)
	}
}

func TestWorker_13_StartupGatingUntilStarted(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	p := f.pod.DeepCopy()
	p.Spec.Containers[0].StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(1)}}}
	p.Status.ContainerStatuses[0].Started = ptr.To(false)
	f.setPod(p)
	f.run(w, 500)
	if f.requests.Load() != 0 {
		t.Fatal("liveness ran before the startup probe passed")
	}
	p = p.DeepCopy()
	p.Status.ContainerStatuses[0].Started = ptr.To(true)
	f.setPod(p)
	f.run(w, 200)
	if f.requests.Load() != 1 {
		t.Fatal("liveness did not run once started")
	}
}

func TestWorker_14_ErrorRetriedThreeTimesThenDroppedCountersUnchanged(t *testing.T) {
	f := newFixture(t)
	tg := f.target(3)
	w := f.worker(tg)
	f.run(w, 500)
	f.run(w, 500)
	// An unresolvable named port: the request cannot be built.
	bad := tg
	bad.Probe.HTTPGet = &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("metrics")}
	w.target.Store(&bad)
	f.run(w, 500)
	f.run(w, 500)
	if n := f.requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2 (errored runs send nothing)", n)
	}
	ev := f.events()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning Unhealthy Liveness probe errored") || !strings.Contains(ev[0], `port "metrics" not found`) {
		t.Fatalf("events %q, want one errored warning", ev)
	}
	w.target.Store(&tg)
	f.run(w, 500) // the third failure in a row: the errors neither reset nor counted
	mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed)
}

func TestWorker_15_ResultCarriesContainerID(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	f.run(w, 200)
	if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded); e.ContainerID != "containerd://c1" {
		t.Errorf("containerID %q", e.ContainerID)
	}
	f.run(w, 500)
	if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed); e.ContainerID != "containerd://c1" {
		t.Errorf("containerID %q", e.ContainerID)
	}
}

func TestWorker_20_29_EventsOnlyOnTransitions(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	for range 3 {
		f.run(w, 302) // unfollowed redirect: success with a warning
	}
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
	f.run(w, 500)
	ev := f.events()
	want := []string{
		"Warning ProbeWarning Liveness probe warning: Probe terminated redirects, Response body: code 302",
		"Warning Unhealthy Liveness probe failed: HTTP probe failed with statuscode: 500",
	}
	if strings.Join(ev, "|") != strings.Join(want, "|") {
		t.Errorf("events:\n%q\nwant\n%q", ev, want)
	}
}

func TestWorker_30_ProbeCounterAndDurationLabelledLikeKubelet(t *testing.T) {
	f := newFixture(t)
	tg := f.target(3)
	tg.PodUID = "uid-metrics"
	p := f.pod.DeepCopy()
	p.UID = "uid-metrics"
	f.setPod(p)
	f.cri.AddSandbox("sb-metrics", "uid-metrics", "127.0.0.1", false)
	w := f.worker(tg)
	f.run(w, 200)
	want := map[string]float64{"probe_total/successful": 1, "duration_count": 1}
	if got := probeSeriesOf(t, "uid-metrics"); !maps.Equal(got, want) {
		t.Errorf("after a success: %v, want %v (failed and unknown appear with their first run)", got, want)
	}
	f.run(w, 500)
	f.run(w, 500)
	want = map[string]float64{"probe_total/successful": 1, "probe_total/failed": 2, "duration_count": 3}
	if got := probeSeriesOf(t, "uid-metrics"); !maps.Equal(got, want) {
		t.Errorf("after two failures: %v, want %v", got, want)
	}
	f.m.mu.Lock()
	f.m.stopLocked(tg.Key, w, true)
	f.m.mu.Unlock()
	if got := probeSeriesOf(t, "uid-metrics"); len(got) != 0 {
		t.Errorf("series kept after the worker stopped: %v", got)
	}
}

// waitFor polls cond for up to 5 s (goroutines on a fake clock need a moment to park).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not met within 5s")
}

func TestWorker_6_SidecarContainerIsProbed(t *testing.T) {
	f := newFixture(t)
	p := f.pod.DeepCopy()
	always := corev1.ContainerRestartPolicyAlways
	p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: &always}}
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{
		Name: "proxy", ContainerID: "containerd://side", Started: ptr.To(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(f.clk.Now().Add(-time.Minute))}},
	}}
	f.setPod(p)
	tg := f.target(1)
	tg.Container = "proxy"
	w := f.worker(tg)
	f.run(w, 500)
	if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed); e.ContainerID != "containerd://side" {
		t.Errorf("containerID %q", e.ContainerID)
	}
}

// BenchmarkWorkerRun is one run of an HTTP worker against a loopback server, in the two steady
// states a node spends its time in: passing (only lastProbeTime moves) and held after a reported
// failure (probed to see a recovery). The HTTP probe itself is most of it (BenchmarkHTTPProbe in
// test/bench); what is left is the worker's gate, run and record.
func BenchmarkWorkerRun(b *testing.B) {
	for _, bc := range []struct {
		name string
		code int
	}{{"passing", 200}, {"held", 500}} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFixture(b)
			tg := f.target(1)
			w := f.worker(tg)
			f.run(w, bc.code)
			b.ReportAllocs()
			for b.Loop() {
				f.run(w, bc.code)
			}
		})
	}
}
