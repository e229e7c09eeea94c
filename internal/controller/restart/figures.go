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
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/figures"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// The figures of enrolling (docs/policy.md, "What enrolling avoids and what it costs"): every
// decision on a failure that reached its threshold (the kubelet's moment, the failure's
// lastTransitionTime) is set beside what the kubelet does, counted once per container instance
// by the decision's figures ledger.

// figureTag is what a counted figure tells the status: the workload and the policies with a
// status that govern its pod.
type figureTag struct {
	workload rules.WorkloadRef
	policies []rules.PolicyKey
}

// figureKey is the container instance a decision is on.
func figureKey(d rules.Decision) figures.Key {
	return figures.Key{Pod: d.UID, Container: d.Failure.Container, ContainerID: d.Failure.ContainerID}
}

// figureTagOf is what the status needs of a counted figure of the decision.
func figureTagOf(d rules.Decision) figureTag {
	return figureTag{workload: d.WorkloadRef, policies: d.StatusPolicies}
}

// figureDecided records a decision of the pod's failure: an Enforce pod's hold (its restart,
// once requested, is recorded by figureRequested), a Shadow pod's verdict.
func (r *Reconciler) figureDecided(pod *corev1.Pod, f *rules.Facts, d rules.Decision) {
	if f.Shadow {
		if v, ok := r.shadowVerdict(f, d); ok {
			fig, counted := r.figures.ShadowVerdict(figureKey(d), d.Failure.Since, v, figureTagOf(d))
			r.countFigure(pod.Namespace, appsv1alpha1.ModeShadow, fig, counted)
		}
		return
	}
	if d.Outcome == rules.Hold {
		fig, counted := r.figures.Enforce(figureKey(d), d.Failure.Since, figures.Verdict{Reason: d.Reason, At: r.clock.Now()},
			figureTagOf(d))
		r.countFigure(pod.Namespace, appsv1alpha1.ModeEnforce, fig, counted)
	}
}

// figureRequested records an Enforce pod's restart: its request was created at created.
func (r *Reconciler) figureRequested(pod *corev1.Pod, d rules.Decision, created time.Time) {
	fig, counted := r.figures.Enforce(figureKey(d), d.Failure.Since, figures.Verdict{Restart: true, At: created}, figureTagOf(d))
	r.countFigure(pod.Namespace, appsv1alpha1.ModeEnforce, fig, counted)
}

// shadowVerdict is what the engine would do with a Shadow pod's failure: the rules past the
// Shadow switch judge it (the memory's Judge, which changes nothing). A switch before it (the
// pod's restart-disabled annotation, --restarts=disabled) is the verdict itself; a result not
// judged (stale, waiting) is none.
func (r *Reconciler) shadowVerdict(f *rules.Facts, d rules.Decision) (figures.Verdict, bool) {
	if d.Outcome != rules.Hold {
		return figures.Verdict{}, false
	}
	now := r.clock.Now()
	if d.Reason != policyv1alpha1.HoldShadow {
		return figures.ShadowVerdict(d.Reason, now), true
	}
	enforced := *f
	enforced.Shadow = false
	switch w := r.memory.Judge(&enforced, d.Failure); w.Outcome {
	case rules.Restart, rules.Evict:
		// An eviction restarts the container too, on another node.
		return figures.ShadowVerdict(policyv1alpha1.HoldShadow, now), true
	case rules.Hold:
		return figures.ShadowVerdict(w.Reason, now), true
	}
	return figures.Verdict{}, false
}

// figureKubelet pairs the kubelet's restarts of a Shadow pod's containers with the engine's
// verdicts: a container that runs another instance than one the engine judged a failure of was
// restarted by the kubelet (the operator never restarts a Shadow pod).
func (r *Reconciler) figureKubelet(pod *corev1.Pod) {
	if pod == nil || !appsv1alpha1.AdmittedInShadow(pod.Labels) {
		return
	}
	for _, cs := range pod.Status.ContainerStatuses {
		for _, fig := range r.figures.Running(pod.UID, cs.Name, cs.ContainerID) {
			r.countFigure(pod.Namespace, appsv1alpha1.ModeShadow, fig, true)
		}
	}
}

// countFigure counts a figure newly set (counted) in the metrics, and hands it to the status of
// the policies that govern its pod.
func (r *Reconciler) countFigure(namespace, mode string, c figures.Counted[figureTag], counted bool) {
	if !counted {
		return
	}
	switch c.Kind {
	case figures.Avoided:
		restartsAvoided.WithLabelValues(namespace, mode, string(c.Reason)).Inc()
	case figures.Agreed:
		restartsAgreed.WithLabelValues(namespace, mode).Inc()
		restartAdded.WithLabelValues(namespace, mode).Observe(c.Added.Seconds())
	}
	w := c.Tag.workload
	r.figureLog.AddFigure(c.Tag.policies, figures.Record{Mode: mode, Figure: c.Figure,
		Workload: policyv1alpha1.WorkloadReference{APIVersion: w.APIVersion, Kind: w.Kind, Name: w.Name}})
}
