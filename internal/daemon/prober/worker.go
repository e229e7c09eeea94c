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
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// maxProbeRetries is how often an errored probe is tried within one run before it is dropped.
const maxProbeRetries = 3

// MessageNotRunning is the message of the Unknown state of a container that is not running.
const MessageNotRunning = "container is not running"

// MessageForeignContainer is the message of the Unknown state of an exec probe not run because
// the runtime says the container the pod's status names is not that container of the pod.
const MessageForeignContainer = "not probed: the container the pod's status names is not this pod's"

// worker runs one liveness probe of one container of one pod.
type worker struct {
	m      *Manager
	key    results.Key
	target atomic.Pointer[Target]
	// handlerChanged asks the next run to restart counting: results of the old handler say
	// nothing about the new one.
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
	// owned is the last container the runtime said is the target's (checked before its first
	// exec: a container's owner never changes), ownedID its ID as the runtime confirmed it, the
	// one the execs name; refused is why it said the last other is not.
	owned, ownedID string
	refused        *cri.NotOwnedError
	// addr is the address the runtime gave for the pod when container addrFor appeared: a new
	// container may be in a new sandbox, the only way a pod's address changes.
	addr    cri.PodAddress
	addrFor string
	state   runState
	// What a run derives from the pod and the target, kept until either is replaced (the pods
	// the manager holds are never modified, so a new version is a new pointer): the container's
	// spec, and the runner of the probe's kind, built at the first run that needs it.
	seenPod    *corev1.Pod
	seenTarget *Target
	container  *corev1.Container
	runner     check.Runner

	stats probeStats
}

func newWorker(m *Manager, t *Target) *worker {
	w := &worker{m: m, key: t.Key, state: newRunState()}
	w.target.Store(t)
	return w
}

// doProbe is one run of the worker: gate (may the container be probed now?), run (the probe,
// retried when it errors) and record (what the result changes). It returns false when the
// worker should stop for good.
func (w *worker) doProbe(ctx context.Context) bool {
	t := w.target.Load()
	pod := w.m.pod(t.PodUID)
	if pod != nil {
		w.follow(pod, t)
	}
	now := w.m.Clock.Now()
	v, cs := gate(pod, t, w.container, now)
	if v == gateStop {
		return false
	}
	if cs != nil && cs.ContainerID != w.containerID {
		// A new container: probed from scratch (docs/probe-semantics.md #9, #10), Unknown until
		// its first result.
		w.containerID = cs.ContainerID
		w.state = w.state.newContainer()
		if w.containerID != "" {
			w.m.report(w, appsv1alpha1.ProbeUnknown, "", now, results.WriteInWindow)
		}
	}
	switch v {
	case gateWait:
		return true
	case gateNotRunning:
		w.state = w.state.notRunning()
		w.m.report(w, appsv1alpha1.ProbeUnknown, MessageNotRunning, now, results.WriteInWindow)
		return true
	}
	start := w.m.Clock.Now()
	o, err := w.run(ctx, t, pod)
	if no := cri.AsNotOwned(err); no != nil {
		w.refuse(t, pod, no, start)
		return true
	}
	w.record(t, pod, o, err, start)
	return true
}

// checkOwner asks the runtime, before the first exec in a container, whether the container is
// the target's: whoever can write the pod's status can name any container of the node there,
// and an exec probe's output goes to the pod's events. The answer is kept for the ID, so the ID
// must be the container's whole ID: a prefix, which the runtime resolves too, could name another
// container later. HTTP, TCP and gRPC probes do not enter the container.
func (w *worker) checkOwner(ctx context.Context, t *Target, pod *corev1.Pod) error {
	switch {
	case t.Probe.Exec == nil || w.containerID == w.owned || w.m.Runtime == nil: // nil: the exec runner says so
		return nil
	case w.refused != nil && w.refused.ContainerID == cri.TrimContainerID(w.containerID):
		return w.refused
	}
	id, err := cri.VerifyOwner(ctx, w.m.Runtime, w.containerID, cri.PodOwner(pod, t.Container))
	if err != nil {
		if cri.AsNotOwned(err) != nil {
			return err
		}
		return &check.RuntimeError{Op: "ContainerStatus", Err: err}
	}
	w.owned, w.ownedID = w.containerID, id
	return nil
}

// runID is the container ID a run names: the one the runtime confirmed when checkOwner did.
func (w *worker) runID() string {
	if w.owned != "" && w.owned == w.containerID {
		return w.ownedID
	}
	return w.containerID
}

// prepare readies a run: the container must be the pod's (checkOwner), and the runner is built
// for the pod's address as the runtime gives it, asked again for each new container.
func (w *worker) prepare(ctx context.Context, t *Target, pod *corev1.Pod) error {
	if err := w.checkOwner(ctx, t, pod); err != nil {
		return err
	}
	if w.runner != nil && w.addrFor == w.containerID {
		return nil
	}
	dials := check.DialsPod(&t.Probe.ProbeHandler)
	if w.addrFor != w.containerID {
		w.addr = cri.PodAddress{}
		if dials {
			a, err := w.m.Addresses.Of(ctx, pod)
			if err != nil {
				return err
			}
			w.addr = a
		}
		w.addrFor = w.containerID
	}
	if dials {
		// Here on every new version of the pod (follow drops the runner): a status.podIP written
		// since is compared too, without asking the runtime again.
		w.m.checkStatusIP(t, pod, w.addr)
	}
	// ctx is the worker's for its whole life: the runner may keep it in its request.
	w.runner = check.NewRunner(ctx, check.Env{Runtime: w.m.Runtime, HTTP: w.m.HTTP, UserAgent: w.m.UserAgent},
		check.Spec{Probe: &t.Probe, Container: w.container, PodIP: w.addr.IP})
	return nil
}

// refuse reports a probe not run because its container is not the pod's: Unknown, never a
// result, with a Warning event and a count once per container.
func (w *worker) refuse(t *Target, pod *corev1.Pod, no *cri.NotOwnedError, at time.Time) {
	if w.refused != no {
		w.refused = no
		cri.OwnerRefusals.WithLabelValues(cri.OpExecProbe, no.Cause).Inc()
		w.m.Events.warn(t, pod, cri.ReasonForeignContainer, "Liveness probe not run: %v", no)
	}
	w.state = w.state.notRunning()
	w.m.report(w, appsv1alpha1.ProbeUnknown, MessageForeignContainer, at, results.WriteInWindow)
}

// follow drops what the worker derived from an older pod or target, and restarts counting
// when the handler changed.
func (w *worker) follow(pod *corev1.Pod, t *Target) {
	if pod != w.seenPod || t != w.seenTarget {
		w.seenPod, w.seenTarget, w.container, w.runner = pod, t, nil, nil
		if rc, ok := podutil.FindRestartable(&pod.Spec, t.Container); ok {
			w.container = rc.Container
		}
	}
	if w.handlerChanged.Swap(false) {
		w.state = w.state.newHandler()
	}
}

// run runs the probe, up to maxProbeRetries times while it errors (docs/probe-semantics.md #14).
func (w *worker) run(ctx context.Context, t *Target, pod *corev1.Pod) (check.Outcome, error) {
	var (
		o   check.Outcome
		err error
	)
	for range maxProbeRetries {
		if err = w.prepare(ctx, t, pod); err == nil {
			if o, err = w.runner.Run(ctx, w.runID()); err == nil {
				return o, nil
			}
		}
		if cri.AsNotOwned(err) != nil {
			return o, err
		}
		if re := (*check.RuntimeError)(nil); errors.As(err, &re) {
			CRIErrors.WithLabelValues(re.Op).Inc()
		} else if se := (*cri.SandboxError)(nil); errors.As(err, &se) {
			CRIErrors.WithLabelValues(se.Op).Inc()
		}
		if ctx.Err() != nil {
			break
		}
	}
	return o, err
}

// record folds the result of the run that started at start into the run state, and writes what
// that changes: the probe's counters, an event when errors or warnings start, the early failure
// mark, and the reported state.
func (w *worker) record(t *Target, pod *corev1.Pod, o check.Outcome, err error, start time.Time) {
	took := w.m.Clock.Since(start).Seconds()
	res := o.Result
	if err != nil {
		res = check.Unknown
	}
	var do effects
	w.state, do = w.state.next(res, start, t.Probe.FailureThreshold, t.Probe.SuccessThreshold)
	w.stats.observe(do.counted, took)
	switch do.event {
	case eventErrored:
		w.m.Events.warn(t, pod, ReasonUnhealthy, "Liveness probe errored and was not counted after %d attempts: %v", maxProbeRetries, err)
	case eventWarning:
		w.m.Events.warn(t, pod, ReasonProbeWarning, "Liveness probe warning: %s", o.Message)
	}
	// The early failure mark is evidence for the storm rules, not a failure: it waits for the
	// writer's window like any other change.
	switch do.mark {
	case markSet:
		w.m.markFailing(w, w.state.failingSince, results.WriteInWindow)
	case markClear:
		w.m.markFailing(w, time.Time{}, results.WriteInWindow)
	}
	switch do.report {
	case appsv1alpha1.ProbeFailed:
		// Written soon: FailureWindow (20 ms by default) after the writer's last write rather than
		// a whole write window (300 ms), because the restart decision waits for it. The
		// cluster-scoped report gets the short reason; the output, which may hold anything the
		// application wrote, goes only to the pod's own namespace, as the kubelet's event does.
		if w.m.report(w, appsv1alpha1.ProbeFailed, o.Reason, start, results.WriteSoon) {
			w.m.Events.warn(t, pod, ReasonUnhealthy, "Liveness probe failed: %s", o.Message)
		}
	case appsv1alpha1.ProbeSucceeded:
		// A recovery waits for the writer's window: nothing is decided on it in a hurry.
		w.m.report(w, appsv1alpha1.ProbeSucceeded, "", start, results.WriteInWindow)
	default:
		w.m.touch(w, start) // the common case: only lastProbeTime moves, nothing is written
	}
}
