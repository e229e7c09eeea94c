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
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

// Reconcile moves one request forward: wait for an older request of the pod, stop containers,
// watch their replacements come up, and finish.
//
// Every status write carries the resourceVersion the plan was made from. The cache can lag behind
// the executor's own last write; such a write conflicts, and the whole step is made again from a
// fresh read, never by re-applying a plan made from stale status.
func (e *Executor) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	e.defaults()
	ctx = withStepStart(ctx, e.Clock.Now())
	crr := &appsv1alpha1.ContainerRecreateRequest{}
	if err := e.Client.Get(ctx, req.NamespacedName, crr); err != nil {
		if apierrors.IsNotFound(err) {
			e.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	for attempt := 0; ; attempt++ {
		res, err := e.reconcileRequest(ctx, crr)
		if !errors.Is(err, errConflict) || attempt >= conflictRetries {
			return res, ignoreSuperseded(err)
		}
		crr = &appsv1alpha1.ContainerRecreateRequest{}
		if err := e.APIReader.Get(ctx, req.NamespacedName, crr); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
}

// reconcileRequest runs one step of a request. The daemon owns execution only: a request whose
// pod is gone, replaced or terminating, or whose deadline passed, is left alone for the manager
// to fail, and nothing of it is stopped any more.
func (e *Executor) reconcileRequest(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (ctrl.Result, error) {
	if !e.owns(crr) || !crr.Active() {
		e.forget(client.ObjectKeyFromObject(crr))
		return ctrl.Result{}, nil
	}
	log := logf.FromContext(ctx)
	now := e.Clock.Now()
	deadline := crr.Deadline()
	if !now.Before(deadline) {
		log.V(1).Info("deadline passed; left for the manager to fail", "deadline", deadline)
		return ctrl.Result{}, nil
	}
	pod, gone, err := e.getPod(ctx, crr)
	if err != nil {
		return ctrl.Result{}, err
	}
	if gone != "" {
		log.V(1).Info("not running the request; left for the manager to fail", "why", gone)
		return ctrl.Result{}, nil
	}

	siblings, err := e.listActive(ctx, crr.Namespace, string(pod.UID))
	if err != nil {
		return ctrl.Result{}, err
	}
	// The turn this process handed out wins over the cache, which may not show it yet.
	nextInCache := ""
	if next := NextToRun(append(siblings, *crr)); next != nil && next.UID != crr.UID {
		nextInCache = next.Name
	}
	if other := e.claimTurn(ctx, pod.UID, crr, nextInCache); other != "" {
		msg := fmt.Sprintf("waiting for ContainerRecreateRequest %s of the same pod to finish", other)
		if _, err := e.writeStatus(ctx, crr, false, func(s *appsv1alpha1.ContainerRecreateRequestStatus) {
			s.Phase, s.Message = appsv1alpha1.RecreatePending, msg
		}); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: e.requeueAfter(0, deadline)}, nil
	}
	return e.execute(ctx, crr, pod, deadline)
}

// getPod returns the request's pod, or why the daemon must not run the request on it. The cache
// may lag behind a new pod, so a miss is confirmed with a live read.
func (e *Executor) getPod(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (*corev1.Pod, string, error) {
	key := types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}
	pod := &corev1.Pod{}
	err := e.Client.Get(ctx, key, pod)
	if apierrors.IsNotFound(err) {
		err = e.APIReader.Get(ctx, key, pod)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, "pod is gone", nil
	case err != nil:
		return nil, "", err
	}
	switch uid := crr.Labels[appsv1alpha1.LabelCRRPodUID]; {
	case uid != "" && uid != string(pod.UID):
		return nil, "pod was replaced", nil
	case pod.DeletionTimestamp != nil:
		return nil, "pod is terminating", nil
	case pod.Spec.NodeName != e.NodeName:
		return nil, "pod is on another node", nil
	}
	return pod, "", nil
}

// execute runs the request that holds its pod's turn.
func (e *Executor) execute(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod,
	deadline time.Time) (ctrl.Result, error) {
	states := crr.Status.ContainerRecreateStates
	attempted := map[string]bool{}
	// Each pass stops what the plan allows; another pass runs only when a container gave up its
	// turn at once (already gone, or a failure ignored), so orderedRecreate moves to the next one.
	for pass := 0; pass <= len(crr.Spec.Containers); pass++ {
		states = e.recordStops(crr, states)
		plan := Advance(Request{
			Containers: crr.Spec.Containers, Strategy: crr.Spec.Strategy, States: states,
			Observed: e.observe(ctx, pod, crr, states), Now: e.Clock.Now(),
			Deadline: deadline,
		})
		e.awaitStops(crr, states, &plan)
		if plan.Phase.Finished() {
			return ctrl.Result{}, e.finish(ctx, crr, plan.States, plan.Phase, plan.Message)
		}
		var kill []string
		for _, name := range plan.Kill {
			if !attempted[name] {
				kill = append(kill, name)
				continue
			}
			// Tried in this reconcile already (it had exited): keep what that attempt recorded.
			for i := range plan.States {
				if plan.States[i].Name == name {
					plan.States[i] = states[i]
				}
			}
			plan.Phase, plan.Message = Summarize(crr.Spec.Strategy.FailurePolicy, plan.States)
		}
		// Record the instances about to be stopped before stopping them (see
		// ContainerRecreateState.containerID); the write also proves the plan's status is current.
		// A stop already under way needs no new proof, and a fresh request whose instances the
		// spec pins has its stops started first and the same write made while they run.
		fence := false
		for _, name := range kill {
			for i := range plan.States {
				if plan.States[i].Name == name && !e.stopStarted(crr, plan.States[i].ContainerID) {
					fence = true
				}
			}
		}
		stopFirst := fence && mayStopFirst(crr, plan.States, kill, e.Clock.Now())
		var err error
		if !stopFirst {
			if crr, err = e.writeStates(ctx, crr, fence, plan.States, plan.Phase, plan.Message); err != nil {
				return ctrl.Result{}, err
			}
		}
		states = plan.States
		if len(kill) == 0 {
			return ctrl.Result{RequeueAfter: e.requeueAfter(plan.RequeueAfter, deadline)}, nil
		}
		stopCtx := ctx
		if !stopFirst {
			stopCtx = withFenced(ctx, e.Clock.Now())
		}
		results, running := e.stopAll(stopCtx, pod, crr, states, kill)
		if stopFirst {
			if crr, err = e.writeStates(ctx, crr, false, states, plan.Phase, plan.Message); err != nil {
				return ctrl.Result{}, err
			}
		}
		again, retry := false, false
		for i := range states {
			r, ok := results[states[i].Name]
			if !ok {
				continue
			}
			attempted[states[i].Name] = true
			states[i].Message = r.message
			switch r.outcome {
			case stopped:
				states[i].IsKilled = true
			case stopFailed:
				states[i].Phase = appsv1alpha1.RecreateFailed
				again = true
			case stopRetry:
				retry = true
			case alreadyStopped:
				again = true
			}
		}
		phase, msg := Summarize(crr.Spec.Strategy.FailurePolicy, states)
		if phase.Finished() {
			return ctrl.Result{}, e.finish(ctx, crr, states, phase, msg)
		}
		if crr, err = e.writeStates(ctx, crr, false, states, phase, msg); err != nil {
			return ctrl.Result{}, err
		}
		if retry {
			return ctrl.Result{RequeueAfter: e.requeueAfter(transientRetryDelay, deadline)}, nil
		}
		if running {
			// The stops that return wake the next step.
			return ctrl.Result{RequeueAfter: e.requeueAfter(0, deadline)}, nil
		}
		if !again {
			break
		}
	}
	return ctrl.Result{RequeueAfter: e.requeueAfter(0, deadline)}, nil
}

func (e *Executor) requeueAfter(want time.Duration, deadline time.Time) time.Duration {
	d := e.PollInterval
	if want > 0 && want < d {
		d = want
	}
	if left := deadline.Sub(e.Clock.Now()); left > 0 && left < d {
		d = left
	}
	return d
}

// recordStops records in states the stops that went through since the status was written: the
// kubelet may start the successor before the next step, which must not take the container for
// one that was replaced without us. A stop started before its status write (mayStopFirst) is
// recorded even when that write did not land.
func (e *Executor) recordStops(crr *appsv1alpha1.ContainerRecreateRequest, states []appsv1alpha1.ContainerRecreateState) []appsv1alpha1.ContainerRecreateState {
	out := slices.Clone(states)
	for _, c := range crr.Spec.Containers {
		i := slices.IndexFunc(out, func(s appsv1alpha1.ContainerRecreateState) bool { return s.Name == c.Name })
		s := appsv1alpha1.ContainerRecreateState{Name: c.Name}
		if i >= 0 {
			s = out[i]
		}
		id := s.ContainerID
		switch s.Phase {
		case "", appsv1alpha1.RecreatePending:
			id = pinnedInstance(c, crr.Spec.Strategy)
		case appsv1alpha1.RecreateRecreating:
		default:
			continue
		}
		if s.IsKilled || id == "" {
			continue
		}
		if r, returned, _ := e.stopOf(crr, id); returned && r.outcome == stopped {
			s.Phase, s.ContainerID, s.IsKilled, s.Message = appsv1alpha1.RecreateRecreating, id, true, r.message
			if i >= 0 {
				out[i] = s
			} else {
				out = append(out, s)
			}
		}
	}
	return out
}

// awaitStops keeps a container from finishing while its stop has not returned (a successor can
// run before it does): its state stays as it was, and the stop's return wakes the next step.
func (e *Executor) awaitStops(crr *appsv1alpha1.ContainerRecreateRequest, states []appsv1alpha1.ContainerRecreateState, plan *Plan) {
	changed := false
	for i, s := range plan.States {
		if !s.Phase.Finished() || s.IsKilled {
			continue
		}
		j := slices.IndexFunc(states, func(o appsv1alpha1.ContainerRecreateState) bool { return o.Name == s.Name })
		if j < 0 {
			continue
		}
		if _, _, running := e.stopOf(crr, states[j].ContainerID); running {
			plan.States[i], changed = states[j], true
		}
	}
	if changed {
		plan.Phase, plan.Message = Summarize(crr.Spec.Strategy.FailurePolicy, plan.States)
	}
}

// observe reads pod status for every unfinished container, and asks the runtime to confirm any
// instance that pod status reports running and that is not the one being restarted.
func (e *Executor) observe(ctx context.Context, pod *corev1.Pod, crr *appsv1alpha1.ContainerRecreateRequest,
	states []appsv1alpha1.ContainerRecreateState) map[string]Observed {
	target := map[string]appsv1alpha1.ContainerRecreateState{}
	for _, s := range states {
		target[s.Name] = s
	}
	out := map[string]Observed{}
	for _, c := range crr.Spec.Containers {
		st := target[c.Name]
		if st.Phase.Finished() {
			continue
		}
		o := ObservePod(pod, c.Name)
		if o.Running && o.ContainerID != "" && o.ContainerID != comparedWith(c, st, crr.Spec.Strategy, o) {
			resp, err := e.Runtime.ContainerStatus(ctx, cri.TrimContainerID(o.ContainerID), false)
			if err != nil {
				logf.FromContext(ctx).V(1).Info("runtime cannot confirm container yet", "container", c.Name, "id", o.ContainerID, "err", err.Error())
			}
			o.RuntimeRunning = err == nil && resp.GetStatus().GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING
		}
		out[c.Name] = o
	}
	return out
}

// comparedWith is the instance the plan compares the pod's current one with: the recorded one, or for a
// container not started on yet, the one step will pick. The runtime's confirmation matters only
// for a current instance that differs from it (a successor), so the first step, on the critical
// path of every restart, goes without that CRI round trip.
func comparedWith(c appsv1alpha1.ContainerRecreateRequestContainer, st appsv1alpha1.ContainerRecreateState,
	strategy appsv1alpha1.ContainerRecreateRequestStrategy, o Observed) string {
	if st.Phase != "" && st.Phase != appsv1alpha1.RecreatePending {
		return st.ContainerID
	}
	return cmp.Or(pinnedInstance(c, strategy), o.ContainerID)
}
