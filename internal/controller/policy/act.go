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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/restarts"
)

// Event reasons on pods.
const (
	EventRestartHeld      = "RestartHeld"
	EventRestartRequested = "RestartRequested"
)

// act carries out a decision and returns when to decide again (0: only on a watch event).
func (r *DecisionReconciler) act(ctx context.Context, pod *corev1.Pod, f failure, d decided) (time.Duration, error) {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	rec := DecisionRecord{Pod: key, Container: f.container, Outcome: d.Outcome, Reason: d.Reason}
	defer func() {
		if r.cfg.OnDecision != nil {
			rec.At = r.clock.Now()
			r.cfg.OnDecision(rec)
		}
	}()
	switch d.Outcome {
	case protection.Ignore:
		return 0, nil
	case protection.Wait:
		if d.RequeueAfter > 0 {
			return d.RequeueAfter, nil
		}
		// The active request's events wake the pod; the fallback covers a lost event.
		return r.cfg.HoldRecheckInterval, nil
	case protection.Hold:
		if r.holds.Record(key, f.instance(), restarts.Hold{
			Reason: d.Reason, Workload: d.workload, Node: pod.Spec.NodeName, Policies: d.policies,
		}) {
			r.counts.Held(withStatus(d.policies), d.Reason)
			restartsHeld.WithLabelValues(string(d.Reason)).Inc()
			// The action carries the hold reason: the events API merges events that differ only
			// in their note into one series, and a new reason must show as a new event.
			r.recorder.Eventf(pod, nil, corev1.EventTypeWarning, EventRestartHeld, string(d.Reason),
				"%s: %s (probe %s, container %s, %s)", d.Reason, d.Message, f.state.Name, f.container, f.state.ContainerID)
			r.statusDirty.notify(d.policies)
		}
		if d.RequeueAfter > 0 {
			return d.RequeueAfter, nil
		}
		return r.cfg.HoldRecheckInterval, nil
	}

	crr := r.buildCRR(pod, f)
	rec.CRRName = crr.Name
	// A held restart is decided again when something else changes (a request finishes, budget
	// comes back), possibly before the cache has seen its own failure clear: informers of
	// different kinds are not ordered. Only then is the failure read again from the API server;
	// a fresh failure needs no second read.
	if r.holds.Held(key, f.instance()) {
		failing, err := r.stillFailing(ctx, pod, f)
		if err != nil || !failing {
			d.Tokens.Cancel()
			r.expectations.CreationObserved(pod.UID, crr.Name)
			rec.Outcome = protection.Wait
			if err != nil {
				return 0, fmt.Errorf("confirming the held restart of %s/%s: %w", pod.Name, f.container, err)
			}
			heldNotConfirmed.Inc()
			// The NodePodProbe event that clears it wakes the pod; the fallback covers a lost one.
			return r.cfg.HoldRecheckInterval, nil
		}
	}
	if err := r.Create(ctx, crr); err != nil {
		// No request, no restart: the rate-limit tokens go back to their buckets.
		d.Tokens.Cancel()
		r.expectations.CreationObserved(pod.UID, crr.Name)
		if apierrors.IsAlreadyExists(err) {
			// This container instance was already requested (an earlier decision or a retry):
			// the deterministic name makes that a no-op.
			rec.Outcome = protection.Wait
			return r.cfg.HoldRecheckInterval, nil
		}
		return 0, fmt.Errorf("creating ContainerRecreateRequest %s/%s: %w", crr.Namespace, crr.Name, err)
	}
	createdAt := r.clock.Now()
	// One line per restart at the default level, with the times that follow it through the manager
	// (docs/policy.md): from the reconcile the NodePodProbe change woke to the acknowledged create.
	logf.FromContext(ctx).Info("restart requested", "pod", key.String(), "container", f.container,
		"containerID", f.state.ContainerID, "request", crr.Name, "reconcileStartedAt", stamp(d.reconcileStarted),
		"decidedAt", stamp(d.decidedAt), "createdAt", stamp(createdAt), "took", createdAt.Sub(d.reconcileStarted).String())
	r.holds.Release(key, f.instance())
	r.outcomes.Requested(d.workload, pod.UID, f.container, f.state.ContainerID,
		protection.SoonAfterRestart(f.initialDelay, f.threshold, f.period), r.clock.Now())
	r.counts.Requested(withStatus(d.policies), r.clock.Now())
	restartsRequested.Inc()
	if !f.state.LastTransitionTime.IsZero() {
		decisionLatency.Observe(crr.CreationTimestamp.Sub(f.state.LastTransitionTime.Time).Seconds())
	}
	r.recorder.Eventf(pod, crr, corev1.EventTypeNormal, EventRestartRequested, "Restart",
		"restarting container %s (%s) after liveness probe %s failed: ContainerRecreateRequest %s",
		f.container, f.state.ContainerID, f.state.Name, crr.Name)
	r.statusDirty.notify(d.policies)
	return 0, nil
}

// stillFailing reads the pod's liveness state from the API server: is the failed container
// instance still Failed there?
func (r *DecisionReconciler) stillFailing(ctx context.Context, pod *corev1.Pod, f failure) (bool, error) {
	npp := &appsv1alpha1.NodePodProbe{}
	if err := r.live.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, npp); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	for _, ps := range npp.Status.PodProbeStatuses {
		if ps.UID != pod.UID {
			continue
		}
		for _, s := range ps.ProbeStates {
			if s.Name == f.state.Name {
				return s.Failed() && s.ContainerID == f.state.ContainerID, nil
			}
		}
	}
	return false, nil
}

// withStatus keeps the policies that have a status to count in: every EnhancedLivenessPolicy,
// not the manager's default policy.
func withStatus(keys []protection.PolicyKey) []protection.PolicyKey {
	out := make([]protection.PolicyKey, 0, len(keys))
	for _, k := range keys {
		if !k.IsDefault() {
			out = append(out, k)
		}
	}
	return out
}

// buildCRR builds the request for one failed container instance.
func (r *DecisionReconciler) buildCRR(pod *corev1.Pod, f failure) *appsv1alpha1.ContainerRecreateRequest {
	_, restarts := podutil.RunningContainerID(pod, f.container)
	crr := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Name:        crrName(pod, f),
			Namespace:   pod.Namespace,
			Labels:      map[string]string{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByDecisionController},
			Annotations: map[string]string{appsv1alpha1.AnnotationCRRProbe: f.state.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: ptr.To(false), BlockOwnerDeletion: ptr.To(false),
			}},
		},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{
			PodName: pod.Name,
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{
				Name: f.container,
				StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{
					ContainerID: f.state.ContainerID, RestartCount: restarts,
				},
			}},
		},
	}
	// The grace period the stop may use (the probe's, else the pod's) sets the deadline, so the
	// request, and the budget it holds, outlives a long preStop.
	crr.SetDefaults(pod, func(string) *int64 { return f.grace })
	return crr
}

// crrName is deterministic in (pod UID, container, containerID), so a retried decision for the
// same container instance can never create a second request. It stays a valid DNS subdomain:
// "<pod>-<container>-<hash>" with the readable part cut to fit.
func crrName(pod *corev1.Pod, f failure) string {
	sum := sha256.Sum256([]byte(string(pod.UID) + "/" + f.container + "/" + f.state.ContainerID))
	hash := hex.EncodeToString(sum[:])[:10]
	prefix := pod.Name + "-" + f.container
	const maxPrefix = 253 - 1 - 10
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	for len(prefix) > 0 && (prefix[len(prefix)-1] == '-' || prefix[len(prefix)-1] == '.') {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + "-" + hash
}

// stamp formats a time for logs: UTC with nanoseconds, whatever the log encoder does with times.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
