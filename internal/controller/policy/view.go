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

package policy

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

// unsafe reads skip the cache's deep copy. Everything read this way is only looked at, never
// modified or kept beyond the reconcile.
var unsafeGet = &client.GetOptions{UnsafeDisableDeepCopy: ptr.To(true)}

// view reads the cluster state one reconcile needs, from the cache, remembering what it read.
type view struct {
	c        client.Reader
	owners   *owners
	expected interface{ Pending(types.UID) bool }
	now      time.Time
	opNS     string
	// Set by the decision controller only, whose memory they update; the policy-status
	// controller's view only reads.
	observedFinished func(pod types.UID, crrName string)
	resolved         func(pod, owner types.UID, w protection.WorkloadKey)

	probes map[string]map[types.UID]*appsv1alpha1.PodProbeStatus // node -> pod UID -> status
	npps   map[string]*appsv1alpha1.NodePodProbe
	leases map[string]daemonLease
}

func newView(c client.Reader, o *owners, expected interface{ Pending(types.UID) bool }, now time.Time, opNS string) *view {
	return &view{c: c, owners: o, expected: expected, now: now, opNS: opNS,
		probes: map[string]map[types.UID]*appsv1alpha1.PodProbeStatus{},
		npps:   map[string]*appsv1alpha1.NodePodProbe{}, leases: map[string]daemonLease{}}
}

// nodeProbe returns the node's NodePodProbe (nil if there is none).
func (v *view) nodeProbe(ctx context.Context, node string) (*appsv1alpha1.NodePodProbe, error) {
	if npp, ok := v.npps[node]; ok {
		return npp, nil
	}
	npp := &appsv1alpha1.NodePodProbe{}
	if err := v.c.Get(ctx, client.ObjectKey{Name: node}, npp, unsafeGet); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
		npp = nil
	}
	v.npps[node] = npp
	m := map[types.UID]*appsv1alpha1.PodProbeStatus{}
	if npp != nil {
		for i := range npp.Status.PodProbeStatuses {
			m[npp.Status.PodProbeStatuses[i].UID] = &npp.Status.PodProbeStatuses[i]
		}
	}
	v.probes[node] = m
	return npp, nil
}

// probeStatus returns the reported probe states of a pod.
func (v *view) probeStatus(ctx context.Context, pod *corev1.Pod) (*appsv1alpha1.PodProbeStatus, error) {
	if pod.Spec.NodeName == "" {
		return nil, nil
	}
	if _, err := v.nodeProbe(ctx, pod.Spec.NodeName); err != nil {
		return nil, err
	}
	return v.probes[pod.Spec.NodeName][pod.UID], nil
}

// failingStates counts a pod's Failed states.
func (v *view) failingStates(ctx context.Context, pod *corev1.Pod) (int, error) {
	e, err := v.evidence(ctx, pod)
	return e.failed, err
}

// podEvidence is what a pod's liveness states say about it.
type podEvidence struct {
	failed int // states that are Failed
	// suspect: a probe has started failing below its threshold. A mark taken before the node's
	// daemon started (an earlier instance left it) is no evidence.
	suspect bool
	// passed: a probe has succeeded and none is failing: the probe can pass on this pod.
	passed bool
}

// evidence reads a pod's liveness states from its node's NodePodProbe status.
func (v *view) evidence(ctx context.Context, pod *corev1.Pod) (podEvidence, error) {
	var e podEvidence
	ps, err := v.probeStatus(ctx, pod)
	if err != nil || ps == nil {
		return e, err
	}
	succeeded := false
	for i := range ps.ProbeStates {
		s := &ps.ProbeStates[i]
		if s.State == appsv1alpha1.ProbeSucceeded && s.FailingSince == nil {
			succeeded = true
		}
		if e.suspect || !s.Suspect() {
			continue
		}
		lease, err := v.daemonLease(ctx, pod.Spec.NodeName)
		if err != nil {
			return e, err
		}
		e.suspect = lease.started.IsZero() || !s.FailingSince.Time.Before(lease.started)
	}
	e.failed = ps.FailedProbes()
	e.passed = succeeded && e.failed == 0 && !e.suspect
	return e, nil
}

// daemonLease is what the node daemon's Lease says: whether it is current, when the daemon
// process started (acquireTime) and when it last renewed (both on the node's clock).
type daemonLease struct {
	current          bool
	started, renewed time.Time
}

// daemonLease reads the node's daemon Lease; a current one was renewed within its duration.
func (v *view) daemonLease(ctx context.Context, node string) (daemonLease, error) {
	if l, ok := v.leases[node]; ok {
		return l, nil
	}
	l, err := v.readLease(ctx, node)
	if err == nil {
		v.leases[node] = l
	}
	return l, err
}

func (v *view) readLease(ctx context.Context, node string) (daemonLease, error) {
	l := &coordinationv1.Lease{}
	err := v.c.Get(ctx, client.ObjectKey{Namespace: v.opNS, Name: appsv1alpha1.DaemonLeasePrefix + node}, l, unsafeGet)
	if apierrors.IsNotFound(err) {
		return daemonLease{}, nil
	}
	if err != nil || l.Spec.RenewTime == nil {
		return daemonLease{}, err
	}
	out := daemonLease{renewed: l.Spec.RenewTime.Time}
	if l.Spec.AcquireTime != nil {
		out.started = l.Spec.AcquireTime.Time
	}
	d := int32(appsv1alpha1.DaemonLeaseDuration)
	if l.Spec.LeaseDurationSeconds != nil {
		d = *l.Spec.LeaseDurationSeconds
	}
	out.current = out.renewed.Add(time.Duration(d) * time.Second).After(v.now)
	return out, nil
}

// restarts reports whether the pod has an active ContainerRecreateRequest in the cache (or one
// this controller created that the cache has not shown finished yet), and whether a finished one
// has not given the pod back yet (see recovering).
func (v *view) restarts(ctx context.Context, pod *corev1.Pod) (active, recovering bool, err error) {
	list := &appsv1alpha1.ContainerRecreateRequestList{}
	if err := v.c.List(ctx, list, client.InNamespace(pod.Namespace),
		client.MatchingFields{managercache.CRRByPod: string(pod.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return false, false, err
	}
	for i := range list.Items {
		crr := &list.Items[i]
		if crr.Active() {
			active = true
			continue
		}
		if v.observedFinished != nil {
			v.observedFinished(pod.UID, crr.Name)
		}
		recovering = recovering || isRecovering(crr, pod)
	}
	return active || v.expected.Pending(pod.UID), recovering, nil
}

// isRecovering reports whether a finished request has not given its pod back: a container it
// stopped still runs the stopped instance (a long grace period outlived the request), or the
// replacement is not running and ready yet. A request that stopped nothing holds nothing.
func isRecovering(crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod) bool {
	for _, st := range crr.Status.ContainerRecreateStates {
		if !st.IsKilled {
			continue
		}
		cs := podutil.ContainerStatus(pod, st.Name)
		if cs == nil || cs.ContainerID == st.ContainerID || cs.State.Running == nil || !cs.Ready {
			return true
		}
	}
	return false
}

// workloadState builds what the budget and storm rules need; it also returns the state of pod.
func (v *view) workloadState(ctx context.Context, pod *corev1.Pod, w protection.Workload) (st protection.WorkloadState, self protection.PodState, found bool, err error) {
	pods, err := v.workloadPods(ctx, pod, w)
	if err != nil {
		return st, self, false, err
	}
	st.Ref = w.Ref
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.UID != w.Ref.UID {
		// The pod's own controller below the workload: one revision of its pod template.
		st.Revision, st.RevisionUID = ref.Kind+"/"+ref.Name, ref.UID
	}
	live := 0
	for _, p := range pods {
		// A finished pod (a Job's completed pod) counts nowhere: not desired, not unavailable,
		// not failing.
		if podutil.IsFinished(p) {
			continue
		}
		live++
		ps, err := v.podState(ctx, p)
		if err != nil {
			return st, self, false, err
		}
		if p.UID == pod.UID {
			self, found = ps, true
		}
		st.Pods = append(st.Pods, ps)
	}
	if w.Desired != nil {
		st.Desired = *w.Desired
	} else {
		st.Desired = int32(live)
	}
	return st, self, found, nil
}

func (v *view) podState(ctx context.Context, p *corev1.Pod) (protection.PodState, error) {
	active, recovering, err := v.restarts(ctx, p)
	if err != nil {
		return protection.PodState{}, err
	}
	e, err := v.evidence(ctx, p)
	if err != nil {
		return protection.PodState{}, err
	}
	var controller types.UID
	if ref := metav1.GetControllerOf(p); ref != nil {
		controller = ref.UID
	}
	return protection.PodState{
		Ready:       podutil.IsReady(p),
		ActiveCRR:   active,
		Recovering:  recovering,
		Failing:     e.failed > 0,
		Suspect:     e.failed == 0 && e.suspect,
		Healthy:     e.passed,
		Terminating: p.DeletionTimestamp != nil,
		Controller:  controller,
	}, nil
}

// nodeState counts the node's enrolled pods and failing pods, and the distinct failing workloads
// only when the failing pods could make a storm (resolving workloads costs lookups).
func (v *view) nodeState(ctx context.Context, node string, rule protection.NodeStormRule) (protection.NodeState, error) {
	st := protection.NodeState{Name: node}
	list := &corev1.PodList{}
	if err := v.c.List(ctx, list, client.MatchingFields{managercache.PodByNode: node}, client.UnsafeDisableDeepCopy); err != nil {
		return st, err
	}
	var failing []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil || podutil.IsFinished(p) {
			continue
		}
		st.Pods++
		e, err := v.evidence(ctx, p)
		if err != nil {
			return st, err
		}
		if e.failed > 0 || e.suspect {
			failing = append(failing, p)
		}
	}
	st.FailingPods = int32(len(failing))
	if st.FailingPods <= protection.Scaled(rule.MaxFailing, st.Pods) {
		return st, nil
	}
	seen := map[protection.WorkloadKey]bool{}
	for _, p := range failing {
		w, err := v.resolve(ctx, p)
		if err != nil {
			return st, err
		}
		seen[w.Ref.Key(p.Namespace)] = true
	}
	st.FailingWorkloads = int32(len(seen))
	return st, nil
}

// governing compiles the namespace's policies and selects those governing the pod. Policies that
// do not compile are skipped (their Ready condition says so).
func (v *view) governing(ctx context.Context, pod *corev1.Pod, def protection.Policy) (protection.Governing, error) {
	list := &policyv1alpha1.EnhancedLivenessPolicyList{}
	if err := v.c.List(ctx, list, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	compiled := make([]protection.Policy, 0, len(list.Items))
	for i := range list.Items {
		p, err := protection.Compile(&list.Items[i])
		if err != nil {
			continue
		}
		compiled = append(compiled, p)
	}
	return protection.Select(compiled, def, pod.Namespace, pod.Labels), nil
}
