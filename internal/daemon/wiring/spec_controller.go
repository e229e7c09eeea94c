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

package wiring

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/report"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/gate"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// SpecReconciler keeps the probe workers in step with the node's NodePodProbe spec and the pods
// bound to the node. It has a single key, the node: every change of the node's NodePodProbe spec,
// of one of its pods or of the trust ConfigMap re-syncs the whole worker set, which the workqueue
// coalesces. The spec names pods; their probes come from the pods' sealed probe contexts, which
// Trust verifies: only the probes it lets through get a worker.
type SpecReconciler struct {
	Client   client.Client
	NodeName string
	// Namespace is the operator namespace (the trust ConfigMap's).
	Namespace string
	Probes    *prober.Manager
	Status    *report.Writer
	Trust     *gate.Gate
}

// Reconcile reads the NodePodProbe and the node's pods and hands them to the probe manager.
func (r *SpecReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	// The cache holds only this node's pods (CacheOptions); the filter guards a wider cache.
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods); err != nil {
		return reconcile.Result{}, err
	}
	podPtrs := make([]*corev1.Pod, 0, len(pods.Items))
	for i := range pods.Items {
		if pods.Items[i].Spec.NodeName == r.NodeName {
			podPtrs = append(podPtrs, &pods.Items[i])
		}
	}
	npp := &appsv1alpha1.NodePodProbe{}
	if err := r.Client.Get(ctx, types.NamespacedName{Name: r.NodeName}, npp); err != nil {
		if apierrors.IsNotFound(err) {
			r.Probes.Sync(nil, podPtrs)
			r.Status.SetPlan(nil)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	keys, err := r.trustedKeys(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	byUID := make(map[types.UID]*corev1.Pod, len(podPtrs))
	for _, p := range podPtrs {
		byUID[p.UID] = p
	}
	entries, retry := r.Trust.Filter(npp.Spec.PodProbes, byUID, keys)
	plan := Plan(npp.Generation, entries)
	r.Probes.Sync(Targets(entries), podPtrs)
	r.Status.SetPlan(plan)
	return reconcile.Result{RequeueAfter: retry}, nil
}

// trustedKeys reads the public keys of the trust ConfigMap; none when it does not exist (then no
// probe runs: nothing can be verified).
func (r *SpecReconciler) trustedKeys(ctx context.Context) (signature.KeySet, error) {
	cm := &corev1.ConfigMap{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: signature.TrustConfigMapName}, cm)
	if apierrors.IsNotFound(err) {
		return signature.KeySet{}, nil
	}
	if err != nil {
		return nil, err
	}
	keys, errs := signature.DecodeKeySet(cm)
	for _, e := range errs {
		logf.FromContext(ctx).Error(e, "an entry of the trust ConfigMap is left out: it verifies nothing")
	}
	return keys, nil
}

// Plan is the report's view of the judged entries of spec generation generation: every pod with
// its probes, those the daemon runs and those it holds back (with why), or, for a pod held back
// whose probes it cannot name (no such pod, a context that does not decode), why.
func Plan(generation int64, entries []gate.Entry) *report.Plan {
	plan := &report.Plan{Generation: generation, Pods: make([]report.PlannedPod, 0, len(entries))}
	for i := range entries {
		e := &entries[i]
		pp := report.PlannedPod{Name: e.Name, Namespace: e.Namespace, UID: e.UID,
			Probes: append(planned(targetsOf(e, e.Run), ""), planned(targetsOf(e, e.Held), e.Why)...)}
		if e.Why != "" && len(pp.Probes) == 0 {
			pp.NotProbed = e.Why
		}
		plan.Pods = append(plan.Pods, pp)
	}
	return plan
}

// planned is what the report writer knows of targets: their keys and intervals, and why the
// daemon does not run them (notRun; empty for the probes it runs).
func planned(targets []prober.Target, notRun string) []report.PlannedProbe {
	out := make([]report.PlannedProbe, 0, len(targets))
	for i := range targets {
		out = append(out, report.PlannedProbe{Key: targets[i].Key, IntervalSeconds: targets[i].IntervalSeconds(), NotRun: notRun})
	}
	return out
}

// Targets lists the probes the daemon runs (gate.Entry.Run).
func Targets(entries []gate.Entry) []prober.Target {
	out := make([]prober.Target, 0, len(entries))
	for i := range entries {
		out = append(out, targetsOf(&entries[i], entries[i].Run)...)
	}
	return out
}

func targetsOf(e *gate.Entry, probes []probecontext.Probe) []prober.Target {
	out := make([]prober.Target, 0, len(probes))
	for _, p := range probes {
		t := prober.Target{Key: results.Key{PodUID: e.UID, Container: p.Container, Probe: p.Name}, PodName: e.Name, Namespace: e.Namespace}
		if p.Probe != nil {
			t.Probe = *p.Probe
		}
		out = append(out, t)
	}
	return out
}

// SetupWithManager watches the node's NodePodProbe (spec changes only: its status is the manager's) and
// the pods bound to the node. The manager's cache should be restricted to the node (CacheOptions).
func (r *SpecReconciler) SetupWithManager(mgr ctrl.Manager) error {
	nodeKey := reconcile.Request{NamespacedName: types.NamespacedName{Name: r.NodeName}}
	toNode := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{nodeKey}
	})
	onNode := predicate.NewPredicateFuncs(func(o client.Object) bool {
		p, ok := o.(*corev1.Pod)
		return ok && p.Spec.NodeName == r.NodeName
	})
	isNode := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == r.NodeName })
	isTrust := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.Namespace && o.GetName() == signature.TrustConfigMapName
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("daemon-nodepodprobe").
		For(&appsv1alpha1.NodePodProbe{}, builder.WithPredicates(isNode, predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Pod{}, toNode, builder.WithPredicates(onNode)).
		Watches(&corev1.ConfigMap{}, toNode, builder.WithPredicates(isTrust)).
		Complete(r)
}
