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
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// observe reads everything a step of the request decides on: the request, its pod, the pod's
// turn, each unfinished container in pod status and (for a successor) in the runtime, and the
// executor's memory of its stops. It reads no further than a fact that leaves the request alone:
// the daemon owns execution only, and a request that is not an active one of this node, whose
// deadline passed or whose pod is gone, replaced or terminating, is the manager's to fail (past
// the deadline, the daemon still reads its memory of the stops the status records in flight).
//
// The one thing observing changes is the pod's turn: it is checked and taken under one lock
// (claimTurn), so that two workers never both see it free.
func (e *Executor) observe(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (Observation, error) {
	o := Observation{
		Containers: crr.Spec.Containers, Strategy: crr.Spec.Strategy, States: crr.Status.ContainerRecreateStates,
		Now: e.Clock.Now(), ReturnWindow: e.ReturnWriteWindow,
	}
	if !e.owns(crr) || !crr.Active() {
		o.Leave, o.Forget = "not an active request of this node", true
		return o, nil
	}
	o.FirstSeen = e.firstSeen(crr, o.Now)
	o.Deadline = o.FirstSeen.Add(crr.ActiveDeadline())
	switch {
	case !o.Now.Before(o.Deadline) && !crr.StopInFlight():
		// A request past its deadline takes no turn.
		o.Leave = "deadline passed; left for the manager to fail"
		return o, nil
	case !o.Now.Before(o.Deadline):
		// Nor does it stop anything; but the manager fails it only once its stops in flight
		// returned, which this daemon alone can tell (Advance writes nothing else).
		o.Stops = e.stopsOf(crr)
		return o, nil
	}
	pod, gone, err := e.getPod(ctx, crr)
	switch {
	case err != nil:
		return o, err
	case gone != "":
		o.Leave = gone + "; left for the manager to fail"
		return o, nil
	}
	o.Pod = pod
	siblings, err := e.listActive(ctx, crr.Namespace, string(pod.UID))
	if err != nil {
		return o, err
	}
	// The turn this process handed out wins over the cache, which may not show it yet.
	nextInCache := ""
	if next := NextToRun(append(siblings, *crr)); next != nil && next.UID != crr.UID {
		nextInCache = next.Name
	}
	if o.WaitingFor = e.claimTurn(ctx, pod.UID, crr, nextInCache); o.WaitingFor != "" {
		return o, nil
	}
	o.Observed = e.observeContainers(ctx, pod, crr)
	o.Stops = e.stopsOf(crr)
	return o, nil
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

// observeContainers reads pod status for every unfinished container, and asks the runtime to
// confirm any instance that pod status reports running and that is not the one being restarted.
func (e *Executor) observeContainers(ctx context.Context, pod *corev1.Pod, crr *appsv1alpha1.ContainerRecreateRequest) map[string]Observed {
	target := map[string]appsv1alpha1.ContainerRecreateState{}
	for _, s := range crr.Status.ContainerRecreateStates {
		target[s.Name] = s
	}
	seen := ObservePod(pod)
	out := map[string]Observed{}
	for _, c := range crr.Spec.Containers {
		st := target[c.Name]
		if st.Phase.Finished() {
			continue
		}
		o := seen[c.Name]
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

// comparedWith is the instance the plan compares the pod's current one with: the recorded one, or
// for a container not started on yet, the one the plan will pick (the pinned one, else the
// current one). The runtime's confirmation matters only for a current instance that differs from
// it (a successor), so the first step, on the critical path of every restart, goes without that
// CRI round trip.
func comparedWith(c appsv1alpha1.ContainerRecreateRequestContainer, st appsv1alpha1.ContainerRecreateState,
	strategy appsv1alpha1.ContainerRecreateRequestStrategy, o Observed) string {
	if st.Phase != "" && st.Phase != appsv1alpha1.RecreatePending {
		return st.ContainerID
	}
	return cmp.Or(pinnedInstance(c, strategy), o.ContainerID)
}

// owns reports whether crr is a request of this node (whether it is still active is its phase).
func (e *Executor) owns(crr *appsv1alpha1.ContainerRecreateRequest) bool {
	return crr.Labels[appsv1alpha1.LabelCRRNodeName] == e.NodeName
}

// listActive lists the active requests of a pod on this node, from the cache: not finished.
func (e *Executor) listActive(ctx context.Context, namespace, podUID string) ([]appsv1alpha1.ContainerRecreateRequest, error) {
	var list appsv1alpha1.ContainerRecreateRequestList
	err := e.Client.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{
		appsv1alpha1.LabelCRRPodUID:   podUID,
		appsv1alpha1.LabelCRRNodeName: e.NodeName,
	})
	return slices.DeleteFunc(list.Items, func(r appsv1alpha1.ContainerRecreateRequest) bool { return !r.Active() }), err
}

// claimTurn gives crr its pod's turn and returns "", or names the request that has to finish
// first: one that holds the turn in this process and is, read fresh from the apiserver, still
// active and unfinished; else the one the cache says is next (nextInCache, "" if crr). The turn
// is checked and taken under one lock, so two workers never both take it.
func (e *Executor) claimTurn(ctx context.Context, podUID types.UID, crr *appsv1alpha1.ContainerRecreateRequest, nextInCache string) string {
	e.mu.Lock()
	t, held := e.turns[podUID]
	e.mu.Unlock()
	if held && t.uid != crr.UID {
		if name := e.stillRunning(ctx, t); name != "" {
			return name
		}
		e.mu.Lock()
		if e.turns[podUID] == t {
			delete(e.turns, podUID)
		}
		e.mu.Unlock()
	}
	mine := held && t.uid == crr.UID
	if !mine && nextInCache != "" {
		return nextInCache
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if cur, ok := e.turns[podUID]; ok && cur.uid != crr.UID {
		return cur.key.Name // another worker took it meanwhile
	}
	if e.turns == nil {
		e.turns = map[types.UID]turn{}
	}
	e.turns[podUID] = turn{key: client.ObjectKeyFromObject(crr), uid: crr.UID}
	return ""
}

// stillRunning returns the name of the turn's request if it is still active and unfinished.
func (e *Executor) stillRunning(ctx context.Context, t turn) string {
	held := &appsv1alpha1.ContainerRecreateRequest{}
	err := e.APIReader.Get(ctx, t.key, held)
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return t.key.Name // cannot tell: keep waiting rather than run two at once
	case err == nil && held.UID == t.uid && e.owns(held) && held.Active():
		return held.Name
	}
	return ""
}

// NextToRun picks, among the unfinished requests of one pod, the one allowed to run: one that is
// already Recreating (never two at once), else the oldest (by creation, then name).
func NextToRun(crrs []appsv1alpha1.ContainerRecreateRequest) *appsv1alpha1.ContainerRecreateRequest {
	var open []*appsv1alpha1.ContainerRecreateRequest
	for i := range crrs {
		if crrs[i].Active() {
			open = append(open, &crrs[i])
		}
	}
	if len(open) == 0 {
		return nil
	}
	slices.SortFunc(open, func(a, b *appsv1alpha1.ContainerRecreateRequest) int {
		ar, br := a.Status.Phase == appsv1alpha1.RecreateRecreating, b.Status.Phase == appsv1alpha1.RecreateRecreating
		if ar != br {
			if ar {
				return -1
			}
			return 1
		}
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return open[0]
}

// ObservePod reads what pod status says about each restartable container of the pod, by name
// (a container not in the spec has none: Observed{}). RuntimeRunning is left for the caller, who
// asks the runtime. The pod is read once per observation, not once per requested container.
func ObservePod(pod *corev1.Pod) map[string]Observed {
	statuses := map[string]*corev1.ContainerStatus{}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			statuses[list[i].Name] = &list[i]
		}
	}
	out := map[string]Observed{}
	for _, rc := range podutil.RestartableContainers(&pod.Spec) {
		o := Observed{InSpec: true, RestartPolicy: podutil.RestartPolicyAfterStop(&pod.Spec, rc)}
		if s := statuses[rc.Container.Name]; s != nil {
			o.ContainerID = s.ContainerID
			if r := s.State.Running; r != nil {
				o.Running, o.StartedAt = true, r.StartedAt.Time
				// started is unset by kubelets that predate it; a running container then counts as started.
				o.Started = s.Started == nil || *s.Started
			}
		}
		out[rc.Container.Name] = o
	}
	return out
}
