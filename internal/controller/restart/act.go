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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// Event reasons on pods.
const (
	EventRestartHeld      = "RestartHeld"
	EventRestartStillHeld = "RestartStillHeld"
	EventRestartRequested = "RestartRequested"
)

// timing is when the reconcile that made a decision began and when the decision was made, for
// the restart's log line.
type timing struct {
	reconcileStarted, decidedAt time.Time
}

// act carries out a decision and returns when to decide again (0: only on a watch event).
func (r *Reconciler) act(ctx context.Context, pod *corev1.Pod, d rules.Decision, t timing) (time.Duration, error) {
	x := d.Failure
	rec := DecisionRecord{Pod: d.Pod, Container: x.Container, Outcome: d.Outcome, Reason: d.Reason}
	defer func() {
		if r.opts.OnDecision != nil {
			rec.At = r.clock.Now()
			r.opts.OnDecision(rec)
		}
	}()
	ineffectiveRestarts.Add(float64(len(d.Seen.Ineffective)))
	switch d.Outcome {
	case rules.Ignore:
		return 0, nil
	case rules.Wait:
		if d.RequeueAfter > 0 {
			return d.RequeueAfter, nil
		}
		// The active request's events wake the pod; the fallback covers a lost event.
		return r.opts.HoldRecheckInterval, nil
	case rules.Hold:
		return r.announceHold(pod, d), nil
	case rules.Evict:
		outcome, after, err := r.evict(ctx, pod, d)
		rec.Outcome = outcome
		return after, err
	}

	crr := buildCRR(pod, x)
	rec.CRRName = crr.Name
	after, err := r.request(ctx, pod, d, crr)
	// What came of the restart: its request was created, or not (its tokens go back to their
	// buckets, and the request is no longer expected).
	if d.Outcome = rules.Withdrawn; err == nil && after == 0 {
		d.Outcome = rules.Requested
	}
	r.memory.Apply(d)
	if d.Outcome == rules.Withdrawn {
		rec.Outcome = rules.Wait
		return after, err
	}
	r.requested(ctx, pod, d, crr, t)
	return 0, nil
}

// announceHold tells a held restart in an event, when the hold is new and every
// rules.HoldEventInterval while it lasts, and returns when to decide again.
func (r *Reconciler) announceHold(pod *corev1.Pod, d rules.Decision) time.Duration {
	x := d.Failure
	if d.NewHold {
		restartsHeld.WithLabelValues(string(d.Reason)).Inc()
	}
	switch {
	case d.NewHold:
		// The action carries the hold reason: the events API merges events that differ only
		// in their note into one series, and a new reason must show as a new event.
		r.recorder.Eventf(pod, nil, corev1.EventTypeWarning, EventRestartHeld, string(d.Reason),
			"%s: %s (probe %s, container %s, %s)", d.Reason, d.Message, x.Probe, x.Container, x.ContainerID)
	case d.Announce:
		// A lasting hold is told again every rules.HoldEventInterval. The action says for how
		// long: the same action again would only count in the first one's series, which the
		// events API writes back every 30 minutes.
		age := r.clock.Now().Sub(d.HeldSince).Round(time.Second)
		r.recorder.Eventf(pod, nil, corev1.EventTypeWarning, EventRestartStillHeld, fmt.Sprintf("%s for %s", d.Reason, age),
			"%s: still held after %s: %s (probe %s, container %s, %s)", d.Reason, age, d.Message, x.Probe, x.Container, x.ContainerID)
	}
	if d.RequeueAfter > 0 {
		return d.RequeueAfter
	}
	return r.opts.HoldRecheckInterval
}

// requested tells of a restart whose request was created: one log line with the times that
// follow it through the manager, the metrics, and the pod's RestartRequested event.
func (r *Reconciler) requested(ctx context.Context, pod *corev1.Pod, d rules.Decision, crr *appsv1alpha1.ContainerRecreateRequest, t timing) {
	x := d.Failure
	createdAt := r.clock.Now()
	// One line per restart at the default level, with the times that follow it through the manager
	// (docs/policy.md): from the reconcile the NodePodProbeReport change woke to the acknowledged create.
	logf.FromContext(ctx).Info("restart requested", "pod", d.Pod.String(), "container", x.Container,
		"containerID", x.ContainerID, "request", crr.Name, "reconcileStartedAt", stamp.Nano(t.reconcileStarted),
		"decidedAt", stamp.Nano(t.decidedAt), "createdAt", stamp.Nano(createdAt), "took", createdAt.Sub(t.reconcileStarted).String())
	restartsRequested.Inc()
	if !x.Since.IsZero() {
		decisionLatency.Observe(crr.CreationTimestamp.Sub(x.Since).Seconds())
	}
	r.figureRequested(pod, d, crr.CreationTimestamp.Time)
	canary := ""
	switch {
	case d.Canary:
		canary = fmt.Sprintf("; the canary of the held restarts of container %s of %s: they follow if its new container passes its probe",
			x.Container, d.WorkloadRef)
	case d.Proven:
		canary = fmt.Sprintf("; released past the rate limit: the held restarts of container %s of %s had a canary that helped",
			x.Container, d.WorkloadRef)
	}
	r.recorder.Eventf(pod, crr, corev1.EventTypeNormal, EventRestartRequested, "Restart",
		"restarting container %s (%s) after liveness probe %s failed: ContainerRecreateRequest %s%s",
		x.Container, x.ContainerID, x.Probe, crr.Name, canary)
}

// request creates the request of a restart. It returns when to decide again instead when the
// request was not created (0 with a nil error: it was).
func (r *Reconciler) request(ctx context.Context, pod *corev1.Pod, d rules.Decision, crr *appsv1alpha1.ContainerRecreateRequest) (time.Duration, error) {
	x := d.Failure
	// A held restart is decided again when something else changes (a request finishes, budget
	// comes back), possibly before the cache has seen its own failure clear: informers of
	// different kinds are not ordered. Only then is the failure read again from the API server;
	// a fresh failure needs no second read.
	if d.Held != "" {
		failing, err := r.stillFailing(ctx, pod, x)
		if err != nil {
			return 0, fmt.Errorf("confirming the held restart of %s/%s: %w", pod.Name, x.Container, err)
		}
		if !failing {
			heldNotConfirmed.Inc()
			// The NodePodProbeReport event that clears it wakes the pod; the fallback covers a lost one.
			return r.opts.HoldRecheckInterval, nil
		}
	}
	if d.Canary {
		// Durable before the restart: a next leader that did not see this canary would release
		// another one at once. Not written, not restarted (its tokens go back).
		if err := r.holds.WriteNow(ctx, d.Key); err != nil {
			return 0, fmt.Errorf("writing the canary %s/%s into its RestartHold before its restart: %w", pod.Name, x.Container, err)
		}
	}
	if err := r.Create(ctx, crr); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// This container instance was already requested (an earlier decision or a retry):
			// the deterministic name makes that a no-op, unless that request failed: the same
			// instance still runs and fails, so the failed request (kept for its TTL) gives way.
			return r.replaceFailed(ctx, crr)
		}
		return 0, fmt.Errorf("creating ContainerRecreateRequest %s/%s: %w", crr.Namespace, crr.Name, err)
	}
	return 0, nil
}

// replaceFailed deletes the finished, failed request named like crr that stopped nothing (no daemon
// picked it up, its deadline passed first) and creates crr in its place; a request still running,
// one that succeeded, one whose stop happened, or one whose stop is still in flight stays.
func (r *Reconciler) replaceFailed(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (time.Duration, error) {
	old := &appsv1alpha1.ContainerRecreateRequest{}
	if err := r.live.Get(ctx, client.ObjectKeyFromObject(crr), old); err != nil {
		return r.opts.HoldRecheckInterval, client.IgnoreNotFound(err)
	}
	if old.Status.Phase != appsv1alpha1.RecreateFailed || old.StopInFlight() {
		// A stop in flight may still go through: a second one would stop the container twice.
		return r.opts.HoldRecheckInterval, nil
	}
	for _, s := range old.Status.ContainerRecreateStates {
		if s.IsKilled {
			// Its stop happened: the instance is on its way out (a grace period), not a new hang.
			return r.opts.HoldRecheckInterval, nil
		}
	}
	uid := old.UID
	if err := r.Delete(ctx, old, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return 0, fmt.Errorf("deleting the failed ContainerRecreateRequest %s/%s: %w", old.Namespace, old.Name, err)
	}
	logf.FromContext(ctx).Info("replacing a failed request of the same container instance", "request", crr.Name,
		"message", old.Status.Message)
	if err := r.Create(ctx, crr); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return r.opts.HoldRecheckInterval, nil // not gone yet (a finalizer): decided again later
		}
		return 0, fmt.Errorf("creating ContainerRecreateRequest %s/%s: %w", crr.Namespace, crr.Name, err)
	}
	return 0, nil
}

// stillFailing reads the pod's liveness state from the API server: is the failed container
// instance still Failed in its node's report?
func (r *Reconciler) stillFailing(ctx context.Context, pod *corev1.Pod, x rules.Failure) (bool, error) {
	rep := &appsv1alpha1.NodePodProbeReport{}
	if err := r.live.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, rep); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if ps := rep.Status.Pod(pod.UID); ps != nil {
		for _, s := range ps.ProbeStates {
			if s.Name == x.Probe {
				return s.Failed() && s.ContainerID == x.ContainerID, nil
			}
		}
	}
	return false, nil
}

// buildCRR builds the request for one failed container instance.
func buildCRR(pod *corev1.Pod, x rules.Failure) *appsv1alpha1.ContainerRecreateRequest {
	crr := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Name:        x.Request,
			Namespace:   pod.Namespace,
			Labels:      map[string]string{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByDecisionController},
			Annotations: map[string]string{appsv1alpha1.AnnotationCRRProbe: x.Probe},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: ptr.To(false), BlockOwnerDeletion: ptr.To(false),
			}},
		},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{
			PodName: pod.Name,
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{
				Name: x.Container,
				StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{
					ContainerID: x.ContainerID, RestartCount: x.RestartCount,
				},
			}},
		},
	}
	// The grace period the stop may use (the probe's, else the pod's) sets the deadline, so the
	// request, and the budget it holds, outlives a long preStop.
	crr.SetDefaults(pod, func(string) *int64 { return x.ProbeGrace })
	return crr
}
