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

package policystatus

import (
	"context"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/facts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/figures"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/patch"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// maxWorkloadSummaries bounds status.workloads (the API allows 20).
const maxWorkloadSummaries = 20

// maxHeldPods bounds status.heldPods (the API allows 50); heldPodsTotal counts them all.
const maxHeldPods = 50

// minStatusInterval spaces a policy's status refreshes: during a burst of decisions the counters
// are written at most once a second instead of once per decision.
const minStatusInterval = time.Second

// Reconciler writes EnhancedLivenessPolicy status: observedGeneration, the
// Ready and StormDetected conditions, enrolled pods, failing containers, the decision counters
// (added from the decision's memory) and the per-workload summary. It reads the cache through the
// decision's facts builder and the decision's memory through snapshots.
type Reconciler struct {
	client.Client
	opts      Options
	recorder  recorder.EventRecorder
	facts     *facts.Builder
	workloads *facts.Workloads
	memory    *memory.Memory
	// figures are the figures of enrolling the decision counted, until a status write takes them.
	figures *figureLog
	dirty   <-chan event.GenericEvent

	mu        sync.Mutex
	lastWrite map[rules.PolicyKey]time.Time
	// written holds, per policy, the counts already added to its status by this process.
	written map[rules.PolicyKey]memory.Counts
}

// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies/status,verbs=get;update;patch

func (r *Reconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&policyv1alpha1.EnhancedLivenessPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Channel(r.dirty, &handler.EnqueueRequestForObject{})).
		// Owner changes only keep observe's remembered workload keys current; they enqueue nothing.
		Watches(&appsv1.ReplicaSet{}, r.workloads.ForgetOnChange()).
		Watches(&appsv1.Deployment{}, r.workloads.ForgetOnChange()).
		Watches(&appsv1.StatefulSet{}, r.workloads.ForgetOnChange()).
		Named("policy-enhancedlivenesspolicy").
		Complete(r)
}

// Reconcile refreshes one policy's status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := rules.PolicyKey{Namespace: req.Namespace, Name: req.Name}
	if wait := r.tooSoon(key); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	pol := &policyv1alpha1.EnhancedLivenessPolicy{}
	if err := r.Get(ctx, req.NamespacedName, pol); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(key)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	mem := r.memory.Snapshot(key)
	st := pol.Status.DeepCopy()
	st.ObservedGeneration = pol.Generation
	if err := r.applied(ctx, pol, st, mem); err != nil {
		return ctrl.Result{}, err
	}

	listHeld(st, mem.HeldPods)
	counts := mem.Counts
	addCounts(st, counts.Sub(r.writtenCounts(key)))
	figs := r.figures.peek(key)
	st.Figures = figures.AddToStatus(st.Figures, figs, r.opts.Clock.Now())
	// The decision writes status.recentEvictions; this controller only drops the expired ones,
	// and writes as now the time of an entry that lies in the future of the API server's clock
	// (a replica whose clock ran ahead wrote it), so that no reader clamps it again to its own now.
	at := r.opts.APIClock.Read()
	apiNow := at.ToAPI(at.Now)
	st.RecentEvictions = rules.PruneEvictions(at.APIEvictions(at.LocalEvictions(logf.FromContext(ctx), key.String(), pol.Status.RecentEvictions)), apiNow)
	resync := resyncAfter(r.opts.ResyncInterval, st.RecentEvictions, apiNow)
	if equality.Semantic.DeepEqual(&pol.Status, st) {
		r.figures.taken(key, len(figs))
		return ctrl.Result{RequeueAfter: resync}, nil
	}
	before := slices.Clone(pol.Status.Conditions)
	// The patch carries the resourceVersion the status was computed from: a cache behind our own
	// last write makes it conflict instead of adding the same counts twice.
	// st was computed from the object written (one attempt: a conflict is never judged again).
	if _, err := patch.Status(ctx, r.Client, nil, pol, func(pol *policyv1alpha1.EnhancedLivenessPolicy) (bool, error) {
		pol.Status = *st
		return true, nil
	}, patch.Attempts(1)); err != nil {
		if apierrors.IsConflict(err) {
			// Our cache has not seen our previous write yet: try again shortly, it is no error.
			return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
		}
		return ctrl.Result{}, err
	}
	r.mu.Lock()
	r.lastWrite[key] = time.Now()
	r.written[key] = counts
	r.mu.Unlock()
	r.figures.taken(key, len(figs))
	r.announce(pol, before, st.Conditions)
	return ctrl.Result{RequeueAfter: resync}, nil
}

// forget drops what is kept of a policy that is gone.
func (r *Reconciler) forget(key rules.PolicyKey) {
	r.mu.Lock()
	delete(r.lastWrite, key)
	delete(r.written, key)
	r.mu.Unlock()
	r.figures.forget(key)
}

// applied sets the Ready condition from whether the spec compiles and, when it does, observes
// the policy's pods into st.
func (r *Reconciler) applied(ctx context.Context, pol *policyv1alpha1.EnhancedLivenessPolicy,
	st *policyv1alpha1.EnhancedLivenessPolicyStatus, mem memory.Snapshot) error {
	compiled, err := rules.Compile(pol)
	if err != nil {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: policyv1alpha1.ConditionReady,
			Status: metav1.ConditionFalse, Reason: "InvalidSpec", ObservedGeneration: pol.Generation,
			Message: err.Error() + "; the policy is not applied"})
		return nil
	}
	msg := "the policy is applied"
	if !r.opts.RestartsEnabled {
		msg = "the policy is applied, but restarts are disabled manager-wide (--restarts=disabled)"
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: policyv1alpha1.ConditionReady,
		Status: metav1.ConditionTrue, Reason: "Applied", ObservedGeneration: pol.Generation, Message: msg})
	return r.observe(ctx, pol, &compiled, st, mem)
}

// announce tells, in a Warning event, each hold condition the written status turned True.
func (r *Reconciler) announce(pol *policyv1alpha1.EnhancedLivenessPolicy, before, after []metav1.Condition) {
	for _, h := range []struct {
		cond   string
		reason policyv1alpha1.HoldReason
	}{
		{policyv1alpha1.ConditionStormDetected, policyv1alpha1.HoldFailureStorm},
		{policyv1alpha1.ConditionRestartsIneffective, policyv1alpha1.HoldRestartIneffective},
	} {
		if c := meta.FindStatusCondition(after, h.cond); c != nil && c.Status == metav1.ConditionTrue &&
			!meta.IsStatusConditionTrue(before, h.cond) {
			r.recorder.Eventf(pol, nil, corev1.EventTypeWarning, string(h.reason), "HoldRestarts", "%s", c.Message)
		}
	}
}

// resyncAfter is when to refresh a policy's status: after interval, or once its first recent
// eviction has expired if that is sooner.
func resyncAfter(interval time.Duration, recent []policyv1alpha1.RecentEviction, now time.Time) time.Duration {
	if next := rules.NextExpiry(recent); !next.IsZero() {
		return min(interval, next.Sub(now)+time.Millisecond)
	}
	return interval
}

// tooSoon returns how long to wait before the policy's status may be written again.
func (r *Reconciler) tooSoon(key rules.PolicyKey) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastWrite == nil {
		r.lastWrite = map[rules.PolicyKey]time.Time{}
		r.written = map[rules.PolicyKey]memory.Counts{}
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

// writtenCounts returns the counts of a policy already in its status.
func (r *Reconciler) writtenCounts(key rules.PolicyKey) memory.Counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written[key]
}

// boolFirst orders the element for which the flag is true first.
func boolFirst(flag bool) int {
	if flag {
		return -1
	}
	return 1
}

// listHeld lists the held restarts, longest held first, at most maxHeldPods of them. A message
// is the hold's from its onset, so it changes only with the reason and since beside it: it adds
// no status write of its own. It is cut to what the API takes, or the whole status would be refused.
func listHeld(st *policyv1alpha1.EnhancedLivenessPolicyStatus, held []memory.HeldPod) {
	st.HeldPods, st.HeldPodsTotal = nil, int32(len(held))
	for _, h := range held[:min(len(held), maxHeldPods)] {
		st.HeldPods = append(st.HeldPods, policyv1alpha1.HeldPod{Pod: h.Pod.Name, Container: h.Container, Reason: h.Reason,
			Since:   metav1.NewTime(h.Since.Truncate(time.Second)),
			Message: truncate.String(h.Message, policyv1alpha1.MaxHeldPodMessageLength)})
	}
}

// addCounts adds the decisions counted since the last status write.
func addCounts(st *policyv1alpha1.EnhancedLivenessPolicyStatus, c memory.Counts) {
	st.RestartsRequested += c.Requested
	if c.Requested > 0 && !c.LastRestart.IsZero() {
		st.LastRestartTime = &metav1.Time{Time: c.LastRestart}
	}
	for _, reason := range policyv1alpha1.HoldReasons {
		n := c.Held[reason]
		if n == 0 {
			continue
		}
		st.RestartsHeld += n
		found := false
		for i := range st.HeldByReason {
			if st.HeldByReason[i].Reason == reason {
				st.HeldByReason[i].Count += n
				found = true
			}
		}
		if !found {
			st.HeldByReason = append(st.HeldByReason, policyv1alpha1.HeldCount{Reason: reason, Count: n})
		}
	}
}
