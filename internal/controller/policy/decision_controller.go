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
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/restarts"
)

// DecisionRecord describes one decision, for Config.OnDecision.
type DecisionRecord struct {
	Pod       types.NamespacedName
	Container string
	Outcome   protection.Outcome
	Reason    protection.Reason
	CRRName   string
	At        time.Time
}

// DecisionReconciler decides, for every fresh Failed liveness state of an enrolled pod, whether
// to restart the container (create a ContainerRecreateRequest) or hold the restart, following
// the order of docs/policy.md, through internal/protection. Requests are pods (namespace/name).
type DecisionReconciler struct {
	client.Client
	live     client.Reader // the API server, uncached
	cfg      Config
	clock    clock.Clock
	recorder recorder.EventRecorder
	limiter  *protection.Limiter
	def      protection.Policy

	// The decision controller's memory (package restarts); the policy-status controller reads it.
	expectations   *restarts.Expectations
	holds          *restarts.Holds
	counts         restarts.CountRecorder
	workloads      *restarts.Workloads
	workloadStorms *protection.StormSettler[protection.WorkloadKey]
	nodeStorms     *protection.StormSettler[string]
	statusDirty    statusNotifier
	owners         *owners
	outcomes       *restarts.Outcomes

	// decideMu makes gathering facts, deciding and recording the expectation one step, so that
	// two failures of one workload decided concurrently cannot both see the same budget.
	decideMu sync.Mutex
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update
// +kubebuilder:rbac:groups=apps,resources=replicasets;deployments;statefulsets,verbs=get;list;watch
// Workloads of other kinds: any owner's /scale (as the disruption controller reads it), and the
// metadata of the common ones; docs/policy.md says how to add another kind.
// +kubebuilder:rbac:groups=*,resources=*/scale,verbs=get
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get
// +kubebuilder:rbac:groups=argoproj.io,resources=rollouts,verbs=get
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets;statefulsets;daemonsets,verbs=get
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=nodepodprobes,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=containerrecreaterequests,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies,verbs=get;list;watch

// Reconcile decides the Failed liveness states of one pod.
func (r *DecisionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	started := r.clock.Now()
	pod := &corev1.Pod{}
	if err := r.Get(ctx, req.NamespacedName, pod, unsafeGet); err != nil {
		if apierrors.IsNotFound(err) {
			r.holds.Forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if pod.Spec.NodeName == "" {
		return ctrl.Result{}, nil
	}
	v := r.newView()
	npp, err := v.nodeProbe(ctx, pod.Spec.NodeName)
	if err != nil {
		return ctrl.Result{}, err
	}
	failed := failedStates(npp, pod)
	keep := map[restarts.Instance]bool{}
	for _, f := range failed {
		keep[f.instance()] = true
	}
	r.holds.Retain(req.NamespacedName, func(i restarts.Instance) bool { return keep[i] })

	var requeue time.Duration
	for _, f := range failed {
		d, err := r.decide(ctx, pod, f)
		if err != nil {
			return ctrl.Result{}, err
		}
		d.reconcileStarted, d.decidedAt = started, r.clock.Now()
		log.V(1).Info("decided", "container", f.container, "containerID", f.state.ContainerID,
			"outcome", d.Outcome, "reason", d.Reason, "message", d.Message, "workload", d.workload,
			"desired", d.desired, "unavailable", d.unavailable, "podAvailable", d.podAvailable)
		after, err := r.act(ctx, pod, f, d)
		if err != nil {
			return ctrl.Result{}, err
		}
		if after > 0 && (requeue == 0 || after < requeue) {
			requeue = after
		}
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// failure is one Failed liveness state with the probe it belongs to.
type failure struct {
	state     appsv1alpha1.ContainerProbeState
	container string
	grace     *int64
	// the probe's timing, for freshness and for what "soon after a restart" means
	period, threshold, initialDelay int32
}

func (f failure) instance() restarts.Instance {
	return restarts.Instance{Container: f.container, ContainerID: f.state.ContainerID}
}

// failedStates returns the pod's Failed states whose probe is still in the NodePodProbe spec,
// ordered by probe name so several failed containers of one pod are handled in a stable order.
func failedStates(npp *appsv1alpha1.NodePodProbe, pod *corev1.Pod) []failure {
	if npp == nil {
		return nil
	}
	var spec *appsv1alpha1.PodProbe
	for i := range npp.Spec.PodProbes {
		if npp.Spec.PodProbes[i].UID == pod.UID {
			spec = &npp.Spec.PodProbes[i]
			break
		}
	}
	if spec == nil {
		return nil
	}
	var out []failure
	for i := range npp.Status.PodProbeStatuses {
		ps := &npp.Status.PodProbeStatuses[i]
		if ps.UID != pod.UID {
			continue
		}
		for _, s := range ps.ProbeStates {
			if !s.Failed() {
				continue
			}
			for _, p := range spec.Probes {
				if p.Name == s.Name {
					out = append(out, failure{state: s, container: p.ContainerName, grace: p.Probe.TerminationGracePeriodSeconds,
						period: p.Probe.PeriodSeconds, threshold: p.Probe.FailureThreshold, initialDelay: p.Probe.InitialDelaySeconds})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b failure) int { return strings.Compare(a.state.Name, b.state.Name) })
	return out
}

// decided carries a decision and what acting on it needs.
type decided struct {
	protection.Decision
	policies []protection.PolicyKey
	workload protection.WorkloadKey
	// what the budget saw, for the decision log
	desired, unavailable int32
	podAvailable         bool
	// when the reconcile began and the decision was made, for the restart's log line
	reconcileStarted, decidedAt time.Time
}

// newView reads the cluster for one decision; the decision controller's view also records what
// it learns (requests seen finished, workloads resolved).
func (r *DecisionReconciler) newView() *view {
	v := newView(r.Client, r.owners, r.expectations, r.clock.Now(), r.cfg.OperatorNamespace)
	v.observedFinished = r.expectations.CreationObserved
	v.resolved = r.workloads.Learn
	return v
}

// decide gathers the facts and decides under decideMu; an allowed restart is recorded as
// expected before the lock is released.
func (r *DecisionReconciler) decide(ctx context.Context, pod *corev1.Pod, f failure) (decided, error) {
	r.decideMu.Lock()
	defer r.decideMu.Unlock()
	v := r.newView()
	running, _ := podutil.RunningContainerID(pod, f.container)
	facts := protection.Facts{
		PodFound:           true,
		PodTerminating:     pod.DeletionTimestamp != nil,
		ResultContainerID:  f.state.ContainerID,
		RunningContainerID: running,
		PodRestartDisabled: pod.Annotations[appsv1alpha1.AnnotationRestartDisabled] == appsv1alpha1.TrueValue,
		ManagerDisabled:    !r.cfg.RestartsEnabled,
		NodeRule:           r.cfg.NodeStorm,
		Node:               protection.NodeState{Name: pod.Spec.NodeName},
	}
	// A stale result needs no further reads.
	if d, stale := protection.Stale(facts); stale {
		return decided{Decision: d}, nil
	}
	var err error
	lease, err := v.daemonLease(ctx, pod.Spec.NodeName)
	if err != nil {
		return decided{}, err
	}
	facts.LeaseCurrent, facts.DaemonStarted, facts.DaemonRenewed = lease.current, lease.started, lease.renewed
	facts.ResultProbeTime, facts.ProbePeriod = f.state.LastProbeTime.Time, f.period
	facts.FailedFor = max(0, r.clock.Since(f.state.LastTransitionTime.Time))
	if facts.Policies, err = v.governing(ctx, pod, r.def); err != nil {
		return decided{}, err
	}
	w, err := v.resolve(ctx, pod)
	if err != nil {
		return decided{}, err
	}
	facts.Target = protection.Target{Workload: w.Ref, PodLabels: pod.Labels, Container: f.container}
	st, self, found, err := v.workloadState(ctx, pod, w)
	if err != nil {
		return decided{}, err
	}
	if !found {
		if self, err = v.podState(ctx, pod); err != nil {
			return decided{}, err
		}
	}
	facts.Workload, facts.PodAvailable, facts.PodHasActiveCRR = st, self.Available(), self.ActiveCRR
	if facts.Node, err = v.nodeState(ctx, pod.Spec.NodeName, r.cfg.NodeStorm); err != nil {
		return decided{}, err
	}
	now := r.clock.Now()
	maxFailing, _ := facts.Policies.MaxFailing(st.Desired)
	// While a storm lasts Decide holds on the storm itself; what Observe returns then only
	// matters once the count is back within the limit.
	wk := w.Ref.Key(pod.Namespace)
	if err := r.noteRefailures(ctx, v, pod, w); err != nil {
		return decided{}, err
	}
	if b, _ := facts.Policies.RestartBreaker(); b.Enabled {
		facts.Restarts = r.outcomes.Tally(wk, b.Window, now)
	}
	facts.WorkloadStormSettling = r.workloadStorms.Observe(wk, st.Storm(maxFailing), now)
	facts.NodeStormSettling = r.nodeStorms.Observe(pod.Spec.NodeName, r.cfg.NodeStorm.Storm(facts.Node), now)
	d := protection.Decide(facts, r.limiter)
	if d.Outcome == protection.Restart {
		r.expectations.ExpectCreation(pod.UID, crrName(pod, f))
	}
	return decided{Decision: d, policies: facts.Policies.Keys(), workload: wk,
		desired: st.Desired, unavailable: st.Unavailable(), podAvailable: facts.PodAvailable}, nil
}

// noteRefailures records, for every pod of the workload whose container the controller restarted,
// whether its new container fails again soon after the restart. All pods of the workload are
// looked at, not only the one being decided, so that restarts that do not help are seen together,
// before another one is made.
func (r *DecisionReconciler) noteRefailures(ctx context.Context, v *view, pod *corev1.Pod, w protection.Workload) error {
	pods, err := v.workloadPods(ctx, pod, w)
	if err != nil {
		return err
	}
	wk := w.Ref.Key(pod.Namespace)
	for _, p := range pods {
		npp, err := v.nodeProbe(ctx, p.Spec.NodeName)
		if err != nil {
			return err
		}
		for _, f := range failedStates(npp, p) {
			cs := podutil.ContainerStatus(p, f.container)
			if cs == nil || cs.State.Running == nil || cs.ContainerID != f.state.ContainerID {
				continue
			}
			if r.outcomes.Failed(wk, p.UID, f.container, f.state.ContainerID, cs.State.Running.StartedAt.Time,
				f.state.LastTransitionTime.Time) {
				ineffectiveRestarts.Inc()
			}
		}
	}
	return nil
}
