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
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// workloadAgg is what the status says of one failing or held workload.
type workloadAgg struct {
	sum         policyv1alpha1.WorkloadSummary
	storm       bool // over maxFailing, or settling after it
	settling    bool
	ineffective bool // restarts held because they do not help
}

// observe counts the enrolled pods the policy selects and their failing containers, and builds
// the workload summary and the StormDetected condition, from the cache and the decision's memory
// (mem).
func (r *Reconciler) observe(ctx context.Context, pol *policyv1alpha1.EnhancedLivenessPolicy,
	p *rules.Policy, st *policyv1alpha1.EnhancedLivenessPolicyStatus, mem memory.Snapshot) error {
	workloads, err := r.observePods(ctx, pol, p, st, mem)
	if err != nil {
		return err
	}
	storms, ineffectives := summarize(workloads, st)
	setWorkloadConditions(st, pol.Generation, storms, ineffectives)
	return nil
}

// observePods counts the policy's enrolled pods (and those of them in Shadow mode), their
// failing and unprobed containers into st, and judges each workload that has a failing or held
// pod.
func (r *Reconciler) observePods(ctx context.Context, pol *policyv1alpha1.EnhancedLivenessPolicy,
	p *rules.Policy, st *policyv1alpha1.EnhancedLivenessPolicyStatus, mem memory.Snapshot) (map[rules.WorkloadKey]*workloadAgg, error) {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(pol.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	now := r.opts.Clock.Now()
	rd := r.facts.Reader()
	held := mem.Reasons
	workloads := map[rules.WorkloadKey]*workloadAgg{}
	st.EnrolledPods, st.ShadowPods, st.FailingContainers, st.UnprobedContainers = 0, 0, 0, 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Labels[appsv1alpha1.LabelEnrolled] != appsv1alpha1.TrueValue || !p.Selects(pod.Namespace, pod.Labels) ||
			podutil.IsFinished(pod) {
			continue
		}
		st.EnrolledPods++
		if appsv1alpha1.AdmittedInShadow(pod.Labels) {
			st.ShadowPods++
		}
		e, err := rd.Evidence(ctx, pod)
		if err != nil {
			return nil, err
		}
		st.FailingContainers += int32(e.Failed)
		u, err := rd.Unprobed(ctx, pod)
		if err != nil {
			return nil, err
		}
		st.UnprobedContainers += int32(u.Containers)
		quiet := e.Failed == 0 && !e.Suspect
		// Only the first failing or held pod of a workload is looked at further: the remembered
		// workload key tells the others apart without walking their owners again.
		wk, err := r.workloads.Key(ctx, pod)
		if err != nil {
			return nil, err
		}
		if _, seen := workloads[wk]; seen || (quiet && held[wk] == "") {
			continue
		}
		// Resolved afresh: the summary and the storm rule need the current desired replicas.
		w, err := rd.Workload(ctx, pod)
		if err != nil {
			return nil, err
		}
		wk = w.Ref.Key(pod.Namespace)
		if _, seen := workloads[wk]; seen || (quiet && held[wk] == "") {
			continue
		}
		ws, err := rd.WorkloadState(ctx, pod, w)
		if err != nil {
			return nil, err
		}
		ws = ws.Expecting(func(p rules.PodState) bool { return mem.Pending(p.UID) })
		v := rules.JudgeWorkload(ws, p, mem.Holds(wk), r.opts.StormSettle, now)
		workloads[wk] = &workloadAgg{storm: v.Storm || v.Settling, settling: v.Settling, ineffective: v.Ineffective,
			sum: policyv1alpha1.WorkloadSummary{
				Workload:        policyv1alpha1.WorkloadReference{APIVersion: w.Ref.APIVersion, Kind: w.Ref.Kind, Name: w.Ref.Name},
				DesiredReplicas: ws.Desired, Unavailable: ws.Unavailable(), FailingPods: ws.FailingPods(),
				SuspectPods: ws.SuspectPods(), HeldReason: v.HeldReason,
			}}
	}
	return workloads, nil
}

// summarize writes the workload summary into st, worst first, and returns what the conditions
// name: the workloads in a storm and those whose restarts are held as ineffective.
func summarize(workloads map[rules.WorkloadKey]*workloadAgg, st *policyv1alpha1.EnhancedLivenessPolicyStatus) (storms, ineffectives []string) {
	list := make([]*workloadAgg, 0, len(workloads))
	for _, a := range workloads {
		list = append(list, a)
	}
	// Worst first: storms, then held, then by failing pods, then by name for a stable order.
	slices.SortFunc(list, func(a, b *workloadAgg) int {
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
	st.Workloads = nil
	for i, a := range list {
		name := a.sum.Workload.Kind + "/" + a.sum.Workload.Name
		if a.storm {
			what := fmt.Sprintf("%s (%d failing and %d starting to fail, of %d)", name,
				a.sum.FailingPods, a.sum.SuspectPods, a.sum.DesiredReplicas)
			if a.settling {
				what = fmt.Sprintf("%s (%d of %d failing, settling)", name, a.sum.FailingPods, a.sum.DesiredReplicas)
			}
			storms = append(storms, what)
		}
		if a.ineffective {
			ineffectives = append(ineffectives, name)
		}
		if i < maxWorkloadSummaries {
			st.Workloads = append(st.Workloads, a.sum)
		}
	}
	return storms, ineffectives
}

// setWorkloadConditions sets StormDetected and RestartsIneffective from the workloads they name.
func setWorkloadConditions(st *policyv1alpha1.EnhancedLivenessPolicyStatus, generation int64, storms, ineffectives []string) {
	cond := metav1.Condition{Type: policyv1alpha1.ConditionStormDetected, ObservedGeneration: generation,
		Status: metav1.ConditionFalse, Reason: "NoStorm", Message: "no workload is over maxFailing"}
	if len(storms) > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, string(policyv1alpha1.HoldFailureStorm)
		// metav1.Condition allows 32768 bytes of message.
		cond.Message = truncate.String("restarts held, more pods failing than maxFailing in: "+strings.Join(storms, ", "), 32000)
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	cond = metav1.Condition{Type: policyv1alpha1.ConditionRestartsIneffective, ObservedGeneration: generation,
		Status: metav1.ConditionFalse, Reason: "RestartsHelp", Message: "no workload's restarts are held as ineffective"}
	if len(ineffectives) > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, string(policyv1alpha1.HoldRestartIneffective)
		cond.Message = truncate.String("restarts held, restarted containers fail again soon after the restart in: "+
			strings.Join(ineffectives, ", "), 32000)
	}
	meta.SetStatusCondition(&st.Conditions, cond)
}
