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

package restart

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart/fairqueue"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (r *Reconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("policy-decision").
		// Namespaces are served in turn: one namespace's backlog (a large fleet held in DryRun, a
		// stream of failures) never delays another's fresh failure by more than one decision.
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.MaxConcurrentReconciles, NewQueue: fairqueue.NewRateLimitingQueue}).
		Watches(&corev1.Pod{}, handler.Funcs{
			CreateFunc:  func(_ context.Context, e event.CreateEvent, q queue) { r.podChanged(e.Object, q) },
			UpdateFunc:  func(_ context.Context, e event.UpdateEvent, q queue) { r.podChanged(e.ObjectNew, q) },
			DeleteFunc:  func(_ context.Context, e event.DeleteEvent, q queue) { r.podDeleted(e.Object, q) },
			GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) { r.podChanged(e.Object, q) },
		}).
		// A change of what a node probes may change what its held pods wait for.
		Watches(&appsv1alpha1.NodePodProbe{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { r.wakeNode(e.Object, q) },
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) { r.wakeNode(e.ObjectNew, q) },
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { r.wakeNode(e.Object, q) },
		}).
		// The results of a node: its report.
		Watches(&appsv1alpha1.NodePodProbeReport{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { r.probesChanged(nil, asReport(e.Object), q) },
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
				r.probesChanged(asReport(e.ObjectOld), asReport(e.ObjectNew), q)
			},
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { r.probesChanged(asReport(e.Object), nil, q) },
		}).
		Watches(&appsv1alpha1.ContainerRecreateRequest{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { r.crrChanged(e.Object, false, q) },
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) { r.crrChanged(e.ObjectNew, false, q) },
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { r.crrChanged(e.Object, true, q) },
		}).
		Watches(&coordinationv1.Lease{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) { r.leaseChanged(e.Object, false, q) },
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) { r.leaseChanged(e.ObjectNew, false, q) },
			DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) { r.leaseChanged(e.Object, true, q) },
		},
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetNamespace() == r.opts.OperatorNamespace && strings.HasPrefix(o.GetName(), appsv1alpha1.DaemonLeasePrefix)
			}))).
		Watches(&policyv1alpha1.EnhancedLivenessPolicy{}, handler.EnqueueRequestsFromMapFunc(r.policyChanged),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&policyv1alpha1.EnhancedLivenessPolicy{}, handler.Funcs{
			// A deleted policy's bucket and counters go with it.
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ queue) {
				r.memory.ForgetPolicy(rules.PolicyKey{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()})
			},
		}).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.workloadChanged("Deployment")),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(r.workloadChanged("StatefulSet")),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&appsv1.ReplicaSet{}, handler.EnqueueRequestsFromMapFunc(r.workloadChanged("ReplicaSet")),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&appsv1.ReplicaSet{}, handler.Funcs{
			// Old ReplicaSets of a Deployment go away after rollouts: forget what was learned of them.
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ queue) { r.workloads.ForgetOwner(e.Object.GetUID()) },
		}).
		Complete(r)
}

// forgetPod drops what is known about a pod that is gone.
func (r *Reconciler) forgetPod(key types.NamespacedName, uid types.UID) {
	r.memory.ForgetPod(key, uid)
	if uid != "" {
		r.workloads.ForgetPod(uid)
	}
}

func add(q queue, keys ...types.NamespacedName) {
	for _, k := range keys {
		q.Add(reconcile.Request{NamespacedName: k})
	}
}

// podChanged decides the pod again and wakes the held pods of its workload and node: a pod that
// became Ready (or went away) changes their budget.
func (r *Reconciler) podChanged(o client.Object, q queue) {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	add(q, client.ObjectKeyFromObject(pod))
	r.wakeWorkloadOf(pod, q)
}

func (r *Reconciler) podDeleted(o client.Object, q queue) {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	r.wakeWorkloadOf(pod, q)
	r.forgetPod(client.ObjectKeyFromObject(pod), pod.UID)
	r.facts.ForgetPod(pod)
}

func (r *Reconciler) wakeWorkloadOf(pod *corev1.Pod, q queue) {
	w, ok := r.workloads.Of(pod.UID)
	if !ok {
		if ref := ctrlRefUID(pod); ref != "" {
			w, ok = r.workloads.Of(ref)
		}
	}
	if ok {
		add(q, r.memory.HeldInWorkload(w)...)
	}
	add(q, r.memory.HeldOnNode(pod.Spec.NodeName)...)
}

func ctrlRefUID(o client.Object) types.UID {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return ref.UID
		}
	}
	return ""
}

// wakeNode wakes the held pods of the node of a NodePodProbe.
func (r *Reconciler) wakeNode(o client.Object, q queue) {
	add(q, r.memory.HeldOnNode(o.GetName())...)
}

// probesChanged records when each failure was first seen, decides every pod with a Failed state,
// and wakes the held pods of the node and the held and waiting pods of the workloads of pods whose
// states changed (a failure that cleared may end a storm, a first pass a wait for evidence). The
// first sightings are taken here, not when a decision reads a node's results: this watch sees
// every failing and suspect pod of every node as soon as it is reported, whether or not a
// decision ever looks at it. Any change of the node's results wakes its held pods: one the rules
// held because its probes were not probed yet is decided again when the daemon's
// probedGeneration catches up with the spec.
func (r *Reconciler) probesChanged(oldRep, newRep *appsv1alpha1.NodePodProbeReport, q queue) {
	var before, after map[types.UID]appsv1alpha1.PodProbeStatus
	node := ""
	if oldRep != nil {
		before, node = podStates(oldRep), oldRep.Name
	}
	if newRep != nil {
		after, node = podStates(newRep), newRep.Name
		r.facts.ObserveProbes(newRep, false)
	} else if oldRep != nil {
		r.facts.ObserveProbes(oldRep, true)
	}
	workloads := map[rules.WorkloadKey]bool{}
	changed := func(key types.NamespacedName, uid types.UID) {
		if w, ok := r.workloadOfProbed(key, uid); ok {
			workloads[w] = true
		}
	}
	for uid, ps := range after {
		if ps.FailedProbes() > 0 {
			add(q, types.NamespacedName{Namespace: ps.Namespace, Name: ps.Name})
		}
		if old, ok := before[uid]; !ok || (old.FailedProbes() > 0) != (ps.FailedProbes() > 0) {
			changed(types.NamespacedName{Namespace: ps.Namespace, Name: ps.Name}, uid)
		}
	}
	for uid, ps := range before {
		if _, ok := after[uid]; !ok {
			changed(types.NamespacedName{Namespace: ps.Namespace, Name: ps.Name}, uid)
		}
	}
	// The daemon probed a new spec of the node: its pods the results leave out have passed their
	// first probe, which may end the wait of a sibling on another node for a revision's evidence.
	if oldRep != nil && newRep != nil && newRep.Status.ProbedGeneration != oldRep.Status.ProbedGeneration {
		for _, pod := range r.podsOn(node) {
			if _, listed := after[pod.UID]; !listed {
				changed(client.ObjectKeyFromObject(pod), pod.UID)
			}
		}
	}
	add(q, r.memory.HeldOnNode(node)...)
	for w := range workloads {
		add(q, r.memory.HeldInWorkload(w)...)
	}
}

// asReport is the NodePodProbeReport a watch event carries (nil for another kind).
func asReport(o client.Object) *appsv1alpha1.NodePodProbeReport {
	rep, _ := o.(*appsv1alpha1.NodePodProbeReport)
	return rep
}

// podStates indexes a report's listed results by pod UID.
func podStates(rep *appsv1alpha1.NodePodProbeReport) map[types.UID]appsv1alpha1.PodProbeStatus {
	m := make(map[types.UID]appsv1alpha1.PodProbeStatus, len(rep.Status.PodProbeStatuses))
	for _, ps := range rep.Status.PodProbeStatuses {
		m[ps.UID] = ps
	}
	return m
}

// workloadOfProbed returns the workload learned for a pod the node's results name: by its UID,
// else by its controller's, as a pod that never failed was never decided (cache reads only).
func (r *Reconciler) workloadOfProbed(key types.NamespacedName, uid types.UID) (rules.WorkloadKey, bool) {
	if w, ok := r.workloads.Of(uid); ok {
		return w, true
	}
	pod := &corev1.Pod{}
	if err := r.Get(context.Background(), key, pod, client.UnsafeDisableDeepCopy); err != nil || pod.UID != uid {
		return rules.WorkloadKey{}, false
	}
	if ref := ctrlRefUID(pod); ref != "" {
		return r.workloads.Of(ref)
	}
	return rules.WorkloadKey{}, false
}

// podsOn returns the cached enrolled pods of a node (shared with the cache: read only).
func (r *Reconciler) podsOn(node string) []*corev1.Pod {
	var list corev1.PodList
	if err := r.List(context.Background(), &list, client.MatchingFields{managercache.PodByNode: node},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

// crrChanged ends the expectation of a request seen finished (and its stop no longer in flight)
// or deleted, and wakes its pod and workload: a finished request frees the pod for its next
// failed container and gives budget back.
func (r *Reconciler) crrChanged(o client.Object, deleted bool, q queue) {
	crr, ok := o.(*appsv1alpha1.ContainerRecreateRequest)
	if !ok {
		return
	}
	uid := types.UID("")
	if ids := managercache.CRRPodUID(crr); len(ids) == 1 {
		uid = types.UID(ids[0])
	}
	if uid != "" && (deleted || (!crr.Active() && !crr.StopInFlight())) {
		r.memory.RequestFinished(uid, crr.Name)
	}
	add(q, types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName})
	if w, ok := r.workloads.Of(uid); ok && uid != "" {
		add(q, r.memory.HeldInWorkload(w)...)
	}
}

// leaseChanged records when the manager saw the daemon's heartbeat, and wakes the held pods of
// the Lease's node (DaemonNotReporting may be over).
func (r *Reconciler) leaseChanged(o client.Object, deleted bool, q queue) {
	if l, ok := o.(*coordinationv1.Lease); ok {
		r.facts.ObserveLease(l, deleted)
	}
	node := strings.TrimPrefix(o.GetName(), appsv1alpha1.DaemonLeasePrefix)
	add(q, r.memory.HeldOnNode(node)...)
}

// policyChanged wakes the held pods of the policy's namespace: the budget, mode or blacklist
// may now allow them.
func (r *Reconciler) policyChanged(_ context.Context, o client.Object) []reconcile.Request {
	return requests(r.memory.HeldInNamespace(o.GetNamespace()))
}

// requests are the reconcile requests of pods.
func requests(pods []types.NamespacedName) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(pods))
	for _, k := range pods {
		out = append(out, reconcile.Request{NamespacedName: k})
	}
	return out
}

// workloadChanged wakes the held pods of a workload whose desired replicas may have changed.
func (r *Reconciler) workloadChanged(kind string) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		w := rules.WorkloadKey{Namespace: o.GetNamespace(), Group: appsv1.GroupName, Kind: kind, Name: o.GetName()}
		return requests(r.memory.HeldInWorkload(w))
	}
}
