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
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// maxWorkloadSummaries bounds status.workloads (the API allows 20).
const maxWorkloadSummaries = 20

// minStatusInterval spaces a policy's status refreshes: during a burst of decisions the counters
// are written at most once a second instead of once per decision.
const minStatusInterval = time.Second

// EnhancedLivenessPolicyReconciler writes EnhancedLivenessPolicy status: observedGeneration, the
// Ready and StormDetected conditions, enrolled pods, failing containers, the decision counters
// (added from the decision controller's pending counts) and the per-workload summary.
type EnhancedLivenessPolicyReconciler struct {
	client.Client
	cfg      Config
	recorder recorder.EventRecorder
	tracker  *tracker
	limiter  *protection.Limiter

	mu        sync.Mutex
	lastWrite map[string]time.Time
}

// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies/status,verbs=get;update;patch

func (r *EnhancedLivenessPolicyReconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&policyv1alpha1.EnhancedLivenessPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Channel(r.tracker.statusDirty, &handler.EnqueueRequestForObject{})).
		Named("policy-enhancedlivenesspolicy").
		Complete(r)
}

// Reconcile refreshes one policy's status.
func (r *EnhancedLivenessPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := req.Namespace + "/" + req.Name
	if wait := r.tooSoon(key); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	pol := &policyv1alpha1.EnhancedLivenessPolicy{}
	if err := r.Get(ctx, req.NamespacedName, pol); err != nil {
		if apierrors.IsNotFound(err) {
			r.tracker.takeCounts(key)
			r.limiter.Forget(key)
			r.mu.Lock()
			delete(r.lastWrite, key)
			r.mu.Unlock()
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	st := pol.Status.DeepCopy()
	st.ObservedGeneration = pol.Generation
	compiled, cerr := protection.Compile(pol)
	if cerr != nil {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: policyv1alpha1.ConditionReady,
			Status: metav1.ConditionFalse, Reason: "InvalidSpec", ObservedGeneration: pol.Generation,
			Message: cerr.Error() + "; the policy is not applied"})
	} else {
		msg := "the policy is applied"
		if !r.cfg.RestartsEnabled {
			msg = "the policy is applied, but restarts are disabled manager-wide (--restarts=disabled)"
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: policyv1alpha1.ConditionReady,
			Status: metav1.ConditionTrue, Reason: "Applied", ObservedGeneration: pol.Generation, Message: msg})
		if err := r.observe(ctx, pol, &compiled, st); err != nil {
			return ctrl.Result{}, err
		}
	}

	counts := r.tracker.takeCounts(key)
	addCounts(st, counts)
	if equality.Semantic.DeepEqual(&pol.Status, st) {
		return ctrl.Result{RequeueAfter: r.cfg.StatusResyncInterval}, nil
	}
	wasStorm := meta.IsStatusConditionTrue(pol.Status.Conditions, policyv1alpha1.ConditionStormDetected)
	pol.Status = *st
	if err := r.Status().Update(ctx, pol); err != nil {
		r.tracker.putBack(key, counts)
		if apierrors.IsConflict(err) {
			// Our cache has not seen our previous write yet: try again shortly, it is no error.
			return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
		}
		return ctrl.Result{}, err
	}
	r.mu.Lock()
	r.lastWrite[key] = time.Now()
	r.mu.Unlock()
	if c := meta.FindStatusCondition(st.Conditions, policyv1alpha1.ConditionStormDetected); c != nil &&
		c.Status == metav1.ConditionTrue && !wasStorm {
		r.recorder.Eventf(pol, nil, corev1.EventTypeWarning, string(protection.ReasonFailureStorm), "HoldRestarts", "%s", c.Message)
	}
	return ctrl.Result{RequeueAfter: r.cfg.StatusResyncInterval}, nil
}

// tooSoon returns how long to wait before the policy's status may be written again.
func (r *EnhancedLivenessPolicyReconciler) tooSoon(key string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastWrite == nil {
		r.lastWrite = map[string]time.Time{}
	}
	last, ok := r.lastWrite[key]
	if !ok {
		return 0
	}
	// Real time, not the injected clock: this paces API writes, it is no policy rule.
	if d := minStatusInterval - time.Since(last); d > 0 {
		return d
	}
	return 0
}

// boolFirst orders the element for which the flag is true first.
func boolFirst(flag bool) int {
	if flag {
		return -1
	}
	return 1
}

func addCounts(st *policyv1alpha1.EnhancedLivenessPolicyStatus, c *policyCounts) {
	if c == nil {
		return
	}
	st.RestartsRequested += c.requested
	if !c.lastRestart.IsZero() {
		st.LastRestartTime = &metav1.Time{Time: c.lastRestart}
	}
	for _, reason := range protection.AllReasons {
		n := c.held[reason]
		if n == 0 {
			continue
		}
		st.RestartsHeld += n
		found := false
		for i := range st.HeldByReason {
			if st.HeldByReason[i].Reason == string(reason) {
				st.HeldByReason[i].Count += n
				found = true
			}
		}
		if !found {
			st.HeldByReason = append(st.HeldByReason, policyv1alpha1.HeldCount{Reason: string(reason), Count: n})
		}
	}
}

// observe counts the enrolled pods the policy selects and their failing containers, and builds
// the workload summary and the StormDetected condition.
func (r *EnhancedLivenessPolicyReconciler) observe(ctx context.Context, pol *policyv1alpha1.EnhancedLivenessPolicy,
	p *protection.Policy, st *policyv1alpha1.EnhancedLivenessPolicyStatus) error {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(pol.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	v := newView(r.Client, r.tracker, r.cfg.Clock.Now(), r.cfg.OperatorNamespace)
	held := r.tracker.heldReasons()
	type agg struct {
		sum      policyv1alpha1.WorkloadSummary
		storm    bool // over maxFailing, or settling after it
		settling bool
	}
	workloads := map[string]*agg{}
	st.EnrolledPods, st.FailingContainers = 0, 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Labels[appsv1alpha1.LabelEnrolled] != appsv1alpha1.TrueValue || !p.Selects(pod.Namespace, pod.Labels) {
			continue
		}
		st.EnrolledPods++
		n, err := v.failingStates(ctx, pod)
		if err != nil {
			return err
		}
		st.FailingContainers += int32(n)
		w, err := v.resolve(ctx, pod)
		if err != nil {
			return err
		}
		wk := workloadKey(pod.Namespace, w.Ref)
		if _, seen := workloads[wk]; seen || (n == 0 && held[wk] == "") {
			continue
		}
		ws, _, _, err := v.workloadState(ctx, pod, w)
		if err != nil {
			return err
		}
		maxFailing := protection.Scaled(p.MaxFailing, ws.Desired)
		storm := ws.Storm(maxFailing)
		settling := r.tracker.storms.Observe(wk, storm, r.cfg.Clock.Now()) > 0 && !storm
		a := &agg{storm: storm || settling, settling: settling, sum: policyv1alpha1.WorkloadSummary{
			Workload:        policyv1alpha1.WorkloadReference{APIVersion: w.Ref.APIVersion, Kind: w.Ref.Kind, Name: w.Ref.Name},
			DesiredReplicas: ws.Desired, Unavailable: ws.Unavailable(), FailingPods: ws.FailingPods(),
			HeldReason: string(held[wk]),
		}}
		if a.storm {
			a.sum.HeldReason = string(protection.ReasonFailureStorm)
		}
		workloads[wk] = a
	}
	list := make([]*agg, 0, len(workloads))
	for _, a := range workloads {
		list = append(list, a)
	}
	// Worst first: storms, then held, then by failing pods, then by name for a stable order.
	slices.SortFunc(list, func(a, b *agg) int {
		if a.storm != b.storm {
			return boolFirst(a.storm)
		}
		if (a.sum.HeldReason != "") != (b.sum.HeldReason != "") {
			return boolFirst(a.sum.HeldReason != "")
		}
		if a.sum.FailingPods != b.sum.FailingPods {
			return int(b.sum.FailingPods - a.sum.FailingPods)
		}
		return strings.Compare(a.sum.Workload.Kind+"/"+a.sum.Workload.Name, b.sum.Workload.Kind+"/"+b.sum.Workload.Name)
	})
	var storms []string
	st.Workloads = nil
	for i, a := range list {
		if a.storm {
			what := fmt.Sprintf("%s/%s (%d of %d failing)", a.sum.Workload.Kind, a.sum.Workload.Name, a.sum.FailingPods, a.sum.DesiredReplicas)
			if a.settling {
				what = fmt.Sprintf("%s/%s (%d of %d failing, settling)", a.sum.Workload.Kind, a.sum.Workload.Name, a.sum.FailingPods, a.sum.DesiredReplicas)
			}
			storms = append(storms, what)
		}
		if i < maxWorkloadSummaries {
			st.Workloads = append(st.Workloads, a.sum)
		}
	}
	cond := metav1.Condition{Type: policyv1alpha1.ConditionStormDetected, ObservedGeneration: pol.Generation,
		Status: metav1.ConditionFalse, Reason: "NoStorm", Message: "no workload is over maxFailing"}
	if len(storms) > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, string(protection.ReasonFailureStorm)
		// metav1.Condition allows 32768 bytes of message.
		cond.Message = truncate.String("restarts held, more pods failing than maxFailing in: "+strings.Join(storms, ", "), 32000)
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	return nil
}
