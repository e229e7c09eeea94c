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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/facts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/figures"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// DecisionRecord describes one decision, for Options.OnDecision. A restart whose request was not
// created (refused, already there, or the held failure not confirmed) is a Wait.
type DecisionRecord struct {
	Pod       types.NamespacedName
	Container string
	Outcome   rules.Outcome
	Reason    policyv1alpha1.HoldReason
	CRRName   string
	At        time.Time
}

// Reconciler decides, for every fresh Failed liveness state of an enrolled pod, whether to
// restart the container (create a ContainerRecreateRequest), evict the pod, or hold the restart,
// following docs/policy.md ("The decision, in order"): it reads the facts from the cache
// (internal/decision/facts), the memory decides them by the rules (internal/decision/memory,
// internal/decision/rules), and it acts. Requests are pods (namespace/name).
type Reconciler struct {
	client.Client
	live client.Reader // the API server, uncached
	// evictClient evicts pods (evict.go).
	evictClient client.Client
	opts        Options
	clock       clock.Clock
	recorder    recorder.EventRecorder
	facts       *facts.Builder
	workloads   *facts.Workloads
	memory      *memory.Memory
	// holds writes the holds' RestartHolds and reads them back when this manager starts leading.
	holds Holds
	// evictions writes the policies' status.recentEvictions around an eviction.
	evictions EvictionRecords
	// figures sets the decisions beside the kubelet's restarts (figures.go).
	figures *figures.Ledger[figureTag]
	// figureLog hands the figures counted to the policies' status.
	figureLog Figures
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
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=nodepodprobes,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=nodepodprobereports,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=containerrecreaterequests,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies,verbs=get;list;watch

// Reconcile decides the Failed liveness states of one pod: it reads the facts, then, for each
// failure, the memory decides and the controller acts.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	started := r.clock.Now()
	// The controller runs on the leader only: its first reconcile is when it starts leading.
	if err := r.holds.Load(ctx); err != nil {
		return ctrl.Result{}, err
	}
	pod, f, err := r.facts.Facts(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.memory.Retain(req.NamespacedName, f.Instances())
	var requeue time.Duration
	for _, x := range f.Failures {
		after, err := r.decide(ctx, pod, f, x, started)
		if err != nil {
			return ctrl.Result{}, err
		}
		if after > 0 && (requeue == 0 || after < requeue) {
			requeue = after
		}
	}
	r.figureKubelet(pod)
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// decide decides one failure of the pod and acts on the decision; it returns when to decide again
// (0: only on a watch event).
func (r *Reconciler) decide(ctx context.Context, pod *corev1.Pod, f *rules.Facts, x rules.Failure, started time.Time) (time.Duration, error) {
	d := r.memory.Decide(f, x)
	logf.FromContext(ctx).V(1).Info("decided", "container", x.Container, "containerID", x.ContainerID,
		"outcome", d.Outcome, "reason", d.Reason, "message", d.Message, "workload", d.Workload,
		"desired", d.Desired, "unavailable", d.Unavailable, "podAvailable", d.PodAvailable)
	r.figureDecided(pod, f, d)
	return r.act(ctx, pod, d, timing{reconcileStarted: started, decidedAt: r.clock.Now()})
}
