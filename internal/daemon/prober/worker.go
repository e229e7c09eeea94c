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
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/httpget"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// maxProbeRetries is how often an errored probe is tried within one run before it is dropped.
const maxProbeRetries = 3

// MessageNotRunning is the message of the Unknown state of a container that is not running.
const MessageNotRunning = "container is not running"

// worker runs one liveness probe of one container of one pod.
type worker struct {
	m      *Manager
	key    Key
	target atomic.Pointer[Target]
	// handlerChanged asks the loop to restart counting: results of the old handler say nothing
	// about the new one.
	handlerChanged atomic.Bool

	// The schedule. A worker has no goroutine of its own between runs, only a timer: a run gets
	// a goroutine that ends with it, so only the probes in flight hold a stack (a probe needs a
	// deep one: net/http's dial and read, gRPC, CRI), not every idle worker (8 KiB each, 40 MiB
	// at 5,000 probes).
	mu       sync.Mutex
	ctx      context.Context // bounds the probes' requests
	timer    clock.Timer
	seq      uint64 // the armed timer's; a timer stopped too late finds it changed and does nothing
	period   time.Duration
	next     time.Time // when the next run is due
	last     time.Time // when the last run started; zero before the first
	running  bool
	stopped  bool
	finished bool // stopped (or its pod finished) with no run in flight: the manager's wait counts it done

	// Owned by the run in flight (runs never overlap).
	containerID string
	onHold      bool
	lastResult  check.Result
	resultRun   int
	erroring    bool
	warned      bool
	// successReported: Succeeded is the cached state of this container; a further success
	// only moves lastProbeTime.
	successReported bool
	// failingMarked: the cache may hold a run of failures of this worker, which a success clears;
	// without it every success would take the cache's write lock for nothing.
	failingMarked bool
	// runStart is when the current run of failures began: its first failure is not evidence
	// enough to mark (a single failed run of a flaky probe), its second is.
	runStart time.Time
	// What a run derives from the pod and the target, kept until either is replaced (the pods the
	// manager holds are never modified, so a new version is a new pointer). The request is reused
	// as net/http allows once its response body is closed: it is the same on every run.
	seenPod    *corev1.Pod
	seenTarget *Target
	container  *corev1.Container
	httpReq    *http.Request
	execCmd    []string // the command with $(VAR) expanded from the container's env

	stats probeStats
}

func newWorker(m *Manager, t *Target) *worker {
	w := &worker{m: m, key: t.Key, failingMarked: true}
	w.target.Store(t)
	return w
}

// doProbe runs the probe once if the container is in a state to be probed, and reports a
// threshold crossing. It returns false when the worker should stop for good.
func (w *worker) doProbe(ctx context.Context) bool {
	t := w.target.Load()
	pod := w.m.pod(t.PodUID)
	if pod == nil {
		return true // not in the cache yet
	}
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false // terminating or finished: never report a failure for it (docs/probe-semantics.md #12)
	}
	cs := podutil.ContainerStatus(pod, t.Container)
	if cs == nil {
		return true
	}
	if pod != w.seenPod || t != w.seenTarget {
		w.seenPod, w.seenTarget, w.container, w.httpReq, w.execCmd = pod, t, nil, nil, nil
		if rc, ok := podutil.FindRestartable(&pod.Spec, t.Container); ok {
			w.container = rc.Container
		}
	}
	if w.handlerChanged.Swap(false) {
		w.lastResult, w.resultRun = check.Unknown, 0
	}
	if cs.ContainerID != w.containerID {
		// A new container: probe it from scratch (docs/probe-semantics.md #9), counters reset (Δ #10).
		w.containerID = cs.ContainerID
		w.onHold = false
		w.lastResult, w.resultRun = check.Unknown, 0
		w.erroring, w.warned, w.successReported = false, false, false
		if w.containerID != "" {
			w.m.report(w, appsv1alpha1.ProbeUnknown, "", w.m.Clock.Now())
		}
	}
	if w.containerID == "" {
		return true
	}
	if cs.State.Running == nil {
		w.successReported = false
		w.m.report(w, appsv1alpha1.ProbeUnknown, MessageNotRunning, w.m.Clock.Now())
		return true // docs/probe-semantics.md #11: never a failure for a container that is not running
	}
	c := w.container
	if c != nil && c.StartupProbe != nil && (cs.Started == nil || !*cs.Started) {
		return true // docs/probe-semantics.md #13: the startup probe has not passed yet
	}
	if w.m.Clock.Since(cs.State.Running.StartedAt.Time) < time.Duration(t.Probe.InitialDelaySeconds)*time.Second {
		return true // docs/probe-semantics.md #6
	}

	start := w.m.Clock.Now()
	o, err := w.runWithRetries(ctx, t, pod, c)
	res := o.Result
	took := w.m.Clock.Since(start).Seconds()
	if err != nil {
		// docs/probe-semantics.md #14: dropped, counters unchanged; one event when errors start.
		w.stats.observe(runUnknown, took)
		if !w.erroring {
			w.m.Events.warn(t, pod, ReasonUnhealthy, "Liveness probe errored and was not counted after %d attempts: %v", maxProbeRetries, err)
		}
		w.erroring = true
		w.m.touch(w, start)
		return true
	}
	w.erroring = false
	if res == check.Warning {
		if !w.warned {
			w.m.Events.warn(t, pod, ReasonProbeWarning, "Liveness probe warning: %s", o.Message)
		}
		w.warned = true
		res = check.Success
	} else {
		w.warned = false
	}
	if res == check.Success {
		w.stats.observe(runSuccessful, took)
	} else {
		w.stats.observe(runFailed, took)
	}

	if w.onHold && res == check.Failure {
		// Δ docs/probe-semantics.md #9: after a reported failure the worker keeps probing only to
		// see the container recover (the restart may be held by the policy); more failures say
		// nothing new.
		w.lastResult, w.resultRun = res, 0
		w.m.touch(w, start)
		return true
	}

	// docs/probe-semantics.md #8: a run of identical results must reach the threshold to be reported.
	if res == w.lastResult {
		w.resultRun++
	} else {
		w.lastResult, w.resultRun = res, 1
	}
	// Early storm evidence: a run of failures is reported from its second consecutive failure
	// (or when it reaches a threshold of 1), below the threshold, with when it began, and cleared
	// when a success ends it; nothing in between. A single failed run is no evidence: a flaky
	// probe must not make its pod a suspect.
	if res == check.Failure && w.resultRun == 1 {
		w.runStart = start
	}
	switch {
	case res == check.Failure && (w.resultRun == 2 || w.resultRun == 1 && t.Probe.FailureThreshold <= 1):
		w.m.markFailing(w, w.runStart)
		w.failingMarked = true
	case res == check.Success && w.failingMarked:
		w.m.markFailing(w, time.Time{})
		w.failingMarked = false
	}
	if (res == check.Failure && w.resultRun < int(t.Probe.FailureThreshold)) ||
		(res == check.Success && w.resultRun < int(t.Probe.SuccessThreshold)) {
		w.m.touch(w, start)
		return true
	}
	if res == check.Success {
		if w.successReported {
			w.m.touch(w, start) // the common case: nothing to report
		} else {
			w.m.report(w, appsv1alpha1.ProbeSucceeded, "", start)
			w.successReported = true
			w.onHold = false // recovered without a restart: the next failure counts from scratch
		}
		return true
	}
	w.successReported = false
	// The cluster-scoped status gets the short reason; the output, which may hold anything the
	// application wrote, goes only to the pod's own namespace, as the kubelet's event does.
	if w.m.report(w, appsv1alpha1.ProbeFailed, o.Reason, start) {
		w.m.Events.warn(t, pod, ReasonUnhealthy, "Liveness probe failed: %s", o.Message)
	}
	// docs/probe-semantics.md #9 (Δ): no further failure of this container is counted or
	// reported until a new container replaces it or it recovers. The kubelet stops probing here
	// because it kills the container at once; here the decision controller may hold the restart
	// (failure storm, budget, rate limit, dry run, blacklist), and a held container that is never
	// probed again would stay Failed forever, so a storm could never end by itself.
	w.onHold = true
	w.resultRun = 0
	return true
}

func (w *worker) runWithRetries(ctx context.Context, t *Target, pod *corev1.Pod, c *corev1.Container) (check.Outcome, error) {
	var (
		o   check.Outcome
		err error
	)
	for range maxProbeRetries {
		if o, err = w.runOnce(ctx, t, pod, c); err == nil {
			return o, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return o, err
}

var errNoPodIP = errors.New("the pod has no IP address yet")

func (w *worker) runOnce(ctx context.Context, t *Target, pod *corev1.Pod, c *corev1.Container) (check.Outcome, error) {
	p := &t.Probe
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	podIP := t.PodIP
	if podIP == "" {
		podIP = pod.Status.PodIP
	}
	switch {
	case p.Exec != nil:
		if w.m.Runtime == nil {
			return check.Outcome{}, errors.New("no container runtime connection for exec probes")
		}
		if w.execCmd == nil {
			var env []corev1.EnvVar
			if c != nil {
				env = c.Env
			}
			w.execCmd = check.ExpandCommand(p.Exec.Command, env)
		}
		o, err := check.Exec(ctx, w.m.Runtime, w.containerID, w.execCmd, timeout)
		if err != nil {
			CRIErrors.WithLabelValues("ExecSync").Inc()
		}
		return o, err
	case p.HTTPGet != nil:
		if p.HTTPGet.Host == "" && podIP == "" {
			return check.Outcome{}, errNoPodIP
		}
		if w.httpReq == nil { // ctx is the worker's for its whole life
			req, err := httpget.NewRequest(p.HTTPGet, c, podIP, w.m.UserAgent)
			if err != nil {
				return check.Outcome{}, err
			}
			w.httpReq = req.WithContext(ctx)
		}
		return w.m.HTTP.Probe(w.httpReq, timeout)
	case p.TCPSocket != nil:
		port, err := podutil.ResolvePort(p.TCPSocket.Port, c)
		if err != nil {
			return check.Outcome{}, err
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		if host == "" {
			return check.Outcome{}, errNoPodIP
		}
		return check.TCP(host, port, timeout)
	case p.GRPC != nil:
		if podIP == "" {
			return check.Outcome{}, errNoPodIP
		}
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		return check.GRPC(podIP, service, int(p.GRPC.Port), timeout, w.m.UserAgent)
	default:
		return check.Outcome{}, fmt.Errorf("probe %s has no handler (exec, httpGet, tcpSocket or grpc)", t.Key)
	}
}
