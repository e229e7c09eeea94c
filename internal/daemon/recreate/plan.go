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
	"strings"
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
	// RestartPolicy applies to this container: its own for a sidecar, else the pod's.
	RestartPolicy corev1.RestartPolicy
	// ContainerID is the current instance in pod status ("<runtime>://<id>"), "" when none.
	ContainerID string
	// Running and Started come from pod status; StartedAt is state.running.startedAt.
	Running   bool
	Started   bool
	StartedAt time.Time
	// RuntimeRunning is the runtime's confirmation that ContainerID is running.
	RuntimeRunning bool
	// ExitedZero: the current instance terminated with exit code 0.
	ExitedZero bool
}

// Request is the input of one planning step.
type Request struct {
	Containers []appsv1alpha1.ContainerRecreateRequestContainer
	Strategy   appsv1alpha1.ContainerRecreateRequestStrategy
	States     []appsv1alpha1.ContainerRecreateState
	Observed   map[string]Observed
	Now        time.Time
	// Deadline is when the manager fails the request if it is not finished: from then on nothing
	// more is stopped.
	Deadline time.Time
}

// Plan is what to do now.
type Plan struct {
	// States is the desired containerRecreateStates, in spec order.
	States []appsv1alpha1.ContainerRecreateState
	// Kill names the containers to stop now; their state's ContainerID is the instance to stop.
	Kill []string
	// Phase and Message are the request's phase and message once States are written.
	Phase   appsv1alpha1.ContainerRecreateRequestPhase
	Message string
	// RequeueAfter > 0 is when a new container will have run for minStartedSeconds.
	RequeueAfter time.Duration
}

// Advance moves every container as far as the observation allows. It is pure: the caller stops
// the containers in Plan.Kill, records the outcome, and calls Summarize again.
func Advance(r Request) Plan {
	failFast := r.Strategy.FailurePolicy != appsv1alpha1.FailurePolicyIgnore
	existing := make(map[string]appsv1alpha1.ContainerRecreateState, len(r.States))
	for _, s := range r.States {
		existing[s.Name] = s
	}
	deadlinePassed := !r.Now.Before(r.Deadline)

	var p Plan
	prev := map[string]appsv1alpha1.ContainerRecreateState{}
	blocked, fatal := "", false
	for _, c := range r.Containers {
		st, ok := existing[c.Name]
		if !ok || st.Phase == "" {
			st = appsv1alpha1.ContainerRecreateState{Name: c.Name, Phase: appsv1alpha1.RecreatePending}
		}
		switch {
		case st.Phase.Finished() || deadlinePassed || fatal:
		case r.Strategy.OrderedRecreate && blocked != "":
			st.Phase = appsv1alpha1.RecreatePending
			st.Message = fmt.Sprintf("waiting for container %s to run again (orderedRecreate)", blocked)
		default:
			prev[c.Name] = st
			var kill bool
			var wait time.Duration
			st, kill, wait = step(c, st, r.Observed[c.Name], r.Strategy, r.Now)
			if kill {
				p.Kill = append(p.Kill, c.Name)
			}
			if wait > 0 && (p.RequeueAfter == 0 || wait < p.RequeueAfter) {
				p.RequeueAfter = wait
			}
			if !st.Phase.Finished() {
				blocked = c.Name
			}
		}
		if st.Phase == appsv1alpha1.RecreateFailed && failFast {
			fatal = true
		}
		p.States = append(p.States, st)
	}
	if fatal {
		// A container failed under failurePolicy Fail: stop nothing more, and leave the containers
		// this pass was about to stop as they were.
		for i, s := range p.States {
			if _, planned := prev[s.Name]; planned && slices.Contains(p.Kill, s.Name) {
				p.States[i] = prev[s.Name]
				p.States[i].Message = "not stopped: the request failed"
			}
		}
		p.Kill = nil
	}
	p.Phase, p.Message = Summarize(r.Strategy.FailurePolicy, p.States)
	if p.Phase.Finished() {
		p.Kill, p.RequeueAfter = nil, 0
	}
	return p
}

// step advances one container that is neither finished nor held back by ordering.
func step(c appsv1alpha1.ContainerRecreateRequestContainer, st appsv1alpha1.ContainerRecreateState, obs Observed,
	strategy appsv1alpha1.ContainerRecreateRequestStrategy, now time.Time) (appsv1alpha1.ContainerRecreateState, bool, time.Duration) {
	if !obs.InSpec {
		return failed(st, fmt.Sprintf("the pod has no container named %q", c.Name)), false, 0
	}
	if obs.RestartPolicy == corev1.RestartPolicyNever {
		return failed(st, "restartPolicy is Never: the kubelet would not start the container again, so it is not stopped"), false, 0
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
		case st.IsKilled && obs.ExitedZero && obs.RestartPolicy == corev1.RestartPolicyOnFailure:
			return failed(st, "exited with code 0 and restartPolicy is OnFailure: the kubelet will not start it again"), false, 0
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

// Summarize derives the request's phase and message from its containers' states. A request past
// its deadline is not failed here: the manager owns timeouts.
func Summarize(policy appsv1alpha1.ContainerRecreateRequestFailurePolicy, states []appsv1alpha1.ContainerRecreateState) (appsv1alpha1.ContainerRecreateRequestPhase, string) {
	var ignored []string
	var waiting *appsv1alpha1.ContainerRecreateState
	for i, s := range states {
		switch {
		case s.Phase == appsv1alpha1.RecreateFailed && policy != appsv1alpha1.FailurePolicyIgnore:
			return appsv1alpha1.RecreateFailed, fmt.Sprintf("container %s: %s", s.Name, s.Message)
		case s.Phase == appsv1alpha1.RecreateFailed:
			ignored = append(ignored, fmt.Sprintf("%s: %s", s.Name, s.Message))
		case s.Phase != appsv1alpha1.RecreateSucceeded && waiting == nil:
			waiting = &states[i]
		}
	}
	if waiting != nil {
		return appsv1alpha1.RecreateRecreating, fmt.Sprintf("container %s: %s", waiting.Name, waiting.Message)
	}
	if len(ignored) > 0 {
		return appsv1alpha1.RecreateSucceeded, fmt.Sprintf("finished; not restarted (failurePolicy Ignore): %s", strings.Join(ignored, "; "))
	}
	return appsv1alpha1.RecreateSucceeded, fmt.Sprintf("all %d container(s) restarted", len(states))
}
