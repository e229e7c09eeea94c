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
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// Observed is what the node sees of one container of the pod right now. Pod status (what the
// kubelet reports) is authoritative for which instance is current; the runtime only confirms
// that the instance pod status calls running really runs.
type Observed struct {
	// InSpec is false when the pod has no container (or restartable init container) of that name.
	InSpec bool
	// RestartPolicy is what the kubelet applies to this container after a stop
	// (podutil.RestartPolicyAfterStop: Always for a sidecar, else the container's own or the pod's).
	RestartPolicy corev1.RestartPolicy
	// ContainerID is the current instance in pod status ("<runtime>://<id>"), "" when none.
	ContainerID string
	// Running and Started come from pod status; StartedAt is state.running.startedAt.
	Running   bool
	Started   bool
	StartedAt time.Time
	// RuntimeRunning is the runtime's confirmation that ContainerID is running.
	RuntimeRunning bool
}

// Observation is everything one step of the executor decides on, read at one moment: the
// request, its pod's containers (pod status and the runtime), and the executor's memory of its
// stops and of the pod's turn.
type Observation struct {
	Containers []appsv1alpha1.ContainerRecreateRequestContainer
	Strategy   appsv1alpha1.ContainerRecreateRequestStrategy
	// States is the request's status.containerRecreateStates as read.
	States []appsv1alpha1.ContainerRecreateState
	// Observed is each unfinished container as the node sees it.
	Observed map[string]Observed
	// Stops is the executor's memory of its stops of the request, by container instance.
	Stops map[string]stopMemo
	// FirstSeen is when this process first saw the request; Deadline is the request's active
	// deadline after that, all on the node's clock (the request's creationTimestamp is the API
	// server's): from then on nothing more is stopped or written. The manager fails the request
	// at its own deadline, judged on its own.
	FirstSeen, Deadline, Now time.Time
	// ReturnWindow is how long the return of a stop that went through may wait to be written
	// with the new container (Executor.ReturnWriteWindow; <= 0: written at once).
	ReturnWindow time.Duration
	// Leave, when set, says why this daemon leaves the request alone (not an active request of
	// this node, its pod gone, its deadline passed); Forget: and forgets what it remembers of it.
	Leave  string
	Forget bool
	// WaitingFor names the request of the same pod that has to finish first.
	WaitingFor string
	// Pod is the request's pod as read; the stops need it (hooks, events), the plan does not.
	Pod *corev1.Pod
}

// Plan is the next action of one request.
type Plan struct {
	// Leave: nothing to write or stop (Observation.Leave, or the deadline passed); Forget: and
	// the executor forgets the request.
	Leave  string
	Forget bool
	// States is the desired containerRecreateStates, in spec order.
	States []appsv1alpha1.ContainerRecreateState
	// Kill names the containers to stop now; their state's ContainerID is the instance to stop.
	Kill []string
	// StopFirst starts the stops before the status write that records their instances
	// (mayStopFirst); otherwise that write goes first and proves the status the plan came from
	// is current.
	StopFirst bool
	// Phase and Message are the request's phase and message once States are written.
	Phase   appsv1alpha1.ContainerRecreateRequestPhase
	Message string
	// Recorded lists the instances whose returned stops States record: the executor's memory
	// hands such a result out once (a stop that went through stays remembered).
	Recorded []string
	// RequeueAfter > 0 is when to look again at the latest: a new container will have run for
	// minStartedSeconds, or a stop that met a transient runtime error is due again.
	RequeueAfter time.Duration
	// AwaitStop: left alone for now, but a stop of the request is in flight and its return has to
	// be written: look again (the return wakes the request; the poll interval covers a lost wake).
	AwaitStop bool
	// WriteAfter > 0: the status changed only by the return of stops that went through and
	// returned within the observation's ReturnWindow. Nothing is written now: the next step
	// writes it, with the new container if the kubelet started one meanwhile, and at the latest
	// WriteAfter from now.
	WriteAfter time.Duration
}

// Fence reports whether the plan's status write must go out even when it changes nothing: it
// proves that the status the plan came from is current before containers are stopped.
func (p Plan) Fence() bool { return len(p.Kill) > 0 && !p.StopFirst }

// Advance decides the next action of a request from one observation, and is pure: the executor
// carries the plan out as it is (stops, then or after its status write) and asks again only with
// a new observation.
func Advance(o Observation) Plan {
	switch {
	case o.Leave != "":
		return Plan{Leave: o.Leave, Forget: o.Forget}
	case o.WaitingFor != "":
		return Plan{States: slices.Clone(o.States), Phase: appsv1alpha1.RecreatePending,
			Message: fmt.Sprintf("waiting for ContainerRecreateRequest %s of the same pod to finish", o.WaitingFor)}
	}
	failFast := o.Strategy.FailurePolicy != appsv1alpha1.FailurePolicyIgnore
	existing := make(map[string]appsv1alpha1.ContainerRecreateState, len(o.States))
	for _, s := range o.States {
		existing[s.Name] = s
	}
	deadlinePassed := !o.Now.Before(o.Deadline)

	var p Plan
	prev := map[string]appsv1alpha1.ContainerRecreateState{}
	blocked, fatal := "", false
	for _, c := range o.Containers {
		st, ok := existing[c.Name]
		if !ok || st.Phase == "" {
			st = appsv1alpha1.ContainerRecreateState{Name: c.Name, Phase: appsv1alpha1.RecreatePending}
		}
		st = o.recordStop(c, st)
		switch {
		case st.Phase.Finished() || deadlinePassed || fatal:
			var recorded string
			if st, recorded = o.settle(st); recorded != "" {
				p.Recorded = append(p.Recorded, recorded)
			}
		case o.Strategy.OrderedRecreate && blocked != "":
			st.Phase = appsv1alpha1.RecreatePending
			st.Message = fmt.Sprintf("waiting for container %s to run again (orderedRecreate)", blocked)
		default:
			prev[c.Name] = st
			next, kill, wait := step(c, st, o.Observed[c.Name], o.Strategy, o.Now)
			var recorded string
			next, kill, wait, recorded = o.stopOf(st, next, kill, wait)
			if recorded != "" {
				p.Recorded = append(p.Recorded, recorded)
			}
			if kill {
				p.Kill = append(p.Kill, c.Name)
			}
			if wait > 0 && (p.RequeueAfter == 0 || wait < p.RequeueAfter) {
				p.RequeueAfter = wait
			}
			if st = next; !st.Phase.Finished() {
				blocked = c.Name
			}
		}
		if st.Phase == appsv1alpha1.RecreateFailed && failFast {
			fatal = true
		}
		p.States = append(p.States, st)
	}
	if fatal {
		p.cancelStops(prev)
	}
	// Past the deadline no container was stepped: nothing to stop, nothing to wait for.
	inFlight := markInFlight(o, p)
	p.Phase, p.Message = Summarize(o.Strategy.FailurePolicy, p.States)
	switch {
	case deadlinePassed && !returned(o.States, p.States):
		// The manager owns timeouts: nothing is stopped any more, and the request is written only
		// to record that a stop in flight returned (the manager waits for that to fail it).
		p.Leave, p.AwaitStop = "deadline passed; left for the manager to fail", inFlight != ""
	case p.Phase.Finished() && inFlight != "":
		// A request ends only once none of its stops is in flight: until then it keeps its pod.
		p.Phase = appsv1alpha1.RecreateRecreating
		p.Message += fmt.Sprintf("; the request ends once the stop of container %s returned", inFlight)
		p.Kill, p.RequeueAfter = nil, 0
	case p.Phase.Finished() || deadlinePassed:
		p.Kill, p.RequeueAfter = nil, 0
	default:
		p.StopFirst = mayStopFirst(o, p.States, p.Kill)
		p.WriteAfter = o.returnWait(p)
	}
	return p
}

// cancelStops is the plan once a container failed under failurePolicy Fail: it stops nothing
// more, and the containers it was about to stop keep their states from before this plan (prev).
func (p *Plan) cancelStops(prev map[string]appsv1alpha1.ContainerRecreateState) {
	for i, s := range p.States {
		if _, planned := prev[s.Name]; planned && slices.Contains(p.Kill, s.Name) {
			p.States[i] = prev[s.Name]
			p.States[i].Message = "not stopped: the request failed"
		}
	}
	p.Kill = nil
}

// markInFlight sets each state's stopInFlight: the container is stopped by this plan, or the
// executor's stop of its instance has not returned. It returns the first such container ("" if
// none). The write that carries the flag goes out before the stop begins (the fence), or for a
// stop begun first (mayStopFirst) right after.
func markInFlight(o Observation, p Plan) string {
	first := ""
	for i := range p.States {
		st := &p.States[i]
		st.StopInFlight = slices.Contains(p.Kill, st.Name) || (st.ContainerID != "" && o.Stops[st.ContainerID].running)
		if st.StopInFlight && first == "" {
			first = st.Name
		}
	}
	return first
}

// returned reports whether a stop the status records in flight is recorded as returned.
func returned(before, after []appsv1alpha1.ContainerRecreateState) bool {
	inFlight := map[string]bool{}
	for _, s := range after {
		inFlight[s.Name] = s.StopInFlight
	}
	for _, s := range before {
		if s.StopInFlight && !inFlight[s.Name] {
			return true
		}
	}
	return false
}

// settle records in a container this step does not advance (finished, past the deadline, after
// a fatal failure) what its stop in flight returned. A stop the executor does not remember was
// begun by an earlier process of the daemon: what it returned is not known, but it is no longer
// this daemon's to wait for. It returns the instance whose returned stop st records ("" if none).
func (o Observation) settle(st appsv1alpha1.ContainerRecreateState) (appsv1alpha1.ContainerRecreateState, string) {
	if !st.StopInFlight {
		return st, ""
	}
	m, ok := o.Stops[st.ContainerID]
	switch {
	case m.running:
		return st, ""
	case !ok || m.result == nil:
		st.Message = fmt.Sprintf("the daemon restarted while stopping %s; what that stop returned is not known", st.ContainerID)
		return st, ""
	}
	st.Message = m.result.message
	st.IsKilled = st.IsKilled || m.result.outcome == stopped
	return st, st.ContainerID
}

// recordStop records in st a stop of this executor's that went through since the status was
// written: the kubelet may start the successor before the next step, which must not take the
// container for one that was replaced without us. A stop started before its status write
// (mayStopFirst) is recorded even when that write did not land.
func (o Observation) recordStop(c appsv1alpha1.ContainerRecreateRequestContainer,
	st appsv1alpha1.ContainerRecreateState) appsv1alpha1.ContainerRecreateState {
	id := st.ContainerID
	switch st.Phase {
	case appsv1alpha1.RecreatePending:
		id = pinnedInstance(c, o.Strategy)
	case appsv1alpha1.RecreateRecreating:
	default:
		return st
	}
	if st.IsKilled || id == "" {
		return st
	}
	if m := o.Stops[id]; m.result != nil && m.result.outcome == stopped {
		st.Phase, st.ContainerID, st.IsKilled, st.Message = appsv1alpha1.RecreateRecreating, id, true, m.result.message
	}
	return st
}

// stopOf applies what the executor remembers of its stop of the container's instance to the
// step from before to next. It returns the state, whether to start a stop, how long to wait at
// most, and the instance whose returned stop the state records ("" if none).
//   - A container whose successor runs while the stop of its instance has not returned does not
//     finish: the stop's return wakes the next step.
//   - A stop to make that is running already is not started again.
//   - A stop to make that returned without stopping (already gone, failed, transient error) is
//     recorded instead: the next stop is for a later step.
func (o Observation) stopOf(before, next appsv1alpha1.ContainerRecreateState, kill bool,
	wait time.Duration) (appsv1alpha1.ContainerRecreateState, bool, time.Duration, string) {
	if next.Phase.Finished() && !next.IsKilled && o.Stops[before.ContainerID].running {
		return before, false, 0, ""
	}
	m, ok := o.Stops[next.ContainerID]
	switch {
	case !kill || !ok:
		return next, kill, wait, ""
	case m.running:
		return next, false, wait, ""
	}
	next.Message = m.result.message
	switch m.result.outcome {
	case stopped:
		next.IsKilled = true
	case stopFailed:
		next.Phase = appsv1alpha1.RecreateFailed
	case stopRetry:
		wait = transientRetryDelay
	}
	return next, false, wait, next.ContainerID
}

// step advances one container that is neither finished nor held back by ordering.
func step(c appsv1alpha1.ContainerRecreateRequestContainer, st appsv1alpha1.ContainerRecreateState, obs Observed,
	strategy appsv1alpha1.ContainerRecreateRequestStrategy, now time.Time) (appsv1alpha1.ContainerRecreateState, bool, time.Duration) {
	if !obs.InSpec {
		return failed(st, fmt.Sprintf("the pod has no container named %q", c.Name)), false, 0
	}
	if obs.RestartPolicy != corev1.RestartPolicyAlways {
		// Under OnFailure an application that exits 0 on SIGTERM would stay stopped: only Always
		// makes a stop a restart, as the kubelet's own liveness kill is.
		return failed(st, fmt.Sprintf("restartPolicy is %s: the kubelet would not start the container again after a "+
			"stop (only restartPolicy Always does, whatever the exit code), so it is not stopped", obs.RestartPolicy)), false, 0
	}
	if st.Phase == appsv1alpha1.RecreatePending {
		target := cmp.Or(pinnedInstance(c, strategy), obs.ContainerID)
		if target == "" || (strategy.ForceRecreate && !obs.Running) {
			// forceRecreate stops whatever instance is current, so it needs one that runs.
			st.Message = "waiting for the container to run"
			return st, false, 0
		}
		st.Phase, st.ContainerID = appsv1alpha1.RecreateRecreating, target
		if obs.ContainerID == target && obs.Running {
			st.Message = "stopping " + target
			return st, true, 0
		}
	}

	if obs.ContainerID == st.ContainerID {
		switch {
		case !st.IsKilled && obs.Running:
			// Recorded as about to be stopped, but the stop did not happen or was not recorded. The
			// message stays as the last attempt left it, so that retrying writes nothing new.
			if st.Message == "" {
				st.Message = "stopping " + st.ContainerID
			}
			return st, true, 0
		}
		if !st.IsKilled || st.Message == "" {
			st.Message = waitMessage(st) // once stopped, keep the stop's own message (grace period, hook outcome)
		}
		return st, false, 0
	}

	// Another instance (or none) is current: wait until it runs, is started and confirmed.
	if obs.ContainerID == "" || !obs.Running || !obs.Started || !obs.RuntimeRunning {
		st.Message = waitMessage(st)
		return st, false, 0
	}
	minStarted := time.Duration(strategy.MinStartedSeconds) * time.Second
	if ran := now.Sub(obs.StartedAt); ran < minStarted {
		st.Message = fmt.Sprintf("new container %s running; waiting until it has run for minStartedSeconds (%d)", obs.ContainerID, strategy.MinStartedSeconds)
		return st, false, minStarted - ran
	}
	st.Phase = appsv1alpha1.RecreateSucceeded
	if st.IsKilled {
		st.Message = "stopped " + st.ContainerID + "; new container " + obs.ContainerID + " running"
	} else {
		st.Message = "not stopped: " + st.ContainerID + " had already been replaced; new container " + obs.ContainerID + " running"
	}
	return st, false, 0
}

// pinnedInstance is the instance the spec names for a container (its statusContext, unless
// forceRecreate); "" when the daemon takes the current one.
func pinnedInstance(c appsv1alpha1.ContainerRecreateRequestContainer, strategy appsv1alpha1.ContainerRecreateRequestStrategy) string {
	if c.StatusContext == nil || strategy.ForceRecreate {
		return ""
	}
	return c.StatusContext.ContainerID
}

func waitMessage(st appsv1alpha1.ContainerRecreateState) string {
	if st.IsKilled {
		return "stopped " + st.ContainerID + "; waiting for the kubelet to start a new container"
	}
	return st.ContainerID + " is no longer running; waiting for the kubelet to start a new container"
}

func failed(st appsv1alpha1.ContainerRecreateState, msg string) appsv1alpha1.ContainerRecreateState {
	st.Phase, st.Message = appsv1alpha1.RecreateFailed, msg
	return st
}
