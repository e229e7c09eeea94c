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
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// Event reasons of an eviction (spec.restartEffectiveness.action Evict), on the pod and on its
// policies.
const (
	EventEvicted         = "Evicted"
	EventEvictionRefused = "EvictionRefused"
)

// DefaultEvictTimeout bounds the eviction call (Options.EvictTimeout): the API server asks to retry a
// PodDisruptionBudget the disruption controller has not processed yet after 10 s, which the client
// would do ten times, keeping a worker the while. No answer in time is a refusal like any other.
const DefaultEvictTimeout = 10 * time.Second

// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// What binds a pod to its node, read uncached and once per pod before an eviction
// (facts/placement.go): its claims and their volumes.
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=get

// evict carries out an Evict decision through the Eviction API, so that PodDisruptionBudgets
// apply, and tells the memory what came of it; it returns when to decide again.
func (r *Reconciler) evict(ctx context.Context, pod *corev1.Pod, d rules.Decision) (rules.Outcome, time.Duration, error) {
	x := d.Failure
	// An eviction is rare and drastic: the failure is always read again from the API server first.
	failing, err := r.stillFailing(ctx, pod, x)
	if err != nil || !failing {
		d.Outcome = rules.EvictionWithdrawn
		r.memory.Apply(d)
		if err != nil {
			return rules.Wait, 0, fmt.Errorf("confirming the failure of %s/%s before its eviction: %w", pod.Name, x.Container, err)
		}
		return rules.Wait, r.opts.HoldRecheckInterval, nil
	}
	// Recorded first: the workload controller creates the replacement as soon as the pod is gone,
	// and the pod webhook steers it only by what the policies' status says then.
	notSteered, full := r.evictions.Record(ctx, pod, d)
	if full {
		// A policy's record is full (its cache was behind): not tried, and the next decision
		// holds the pod, visibly, until an entry expires (rules.Governing.FullEvictions).
		r.withdrawEviction(ctx, pod, d)
		return rules.Wait, r.opts.HoldRecheckInterval, nil
	}
	if d.Canary {
		// Durable before the eviction, as a canary before its restart: a next leader that did
		// not see it would release another pod of the key at once. Not written, not evicted.
		if err := r.holds.WriteNow(ctx, d.Key); err != nil {
			r.withdrawEviction(ctx, pod, d)
			return rules.Wait, 0, fmt.Errorf("writing the canary %s/%s into its RestartHold before its eviction: %w", pod.Name, x.Container, err)
		}
	}
	uid := pod.UID
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}}
	callCtx, cancel := context.WithTimeout(ctx, r.opts.EvictTimeout)
	err = r.evictClient.SubResource("eviction").Create(callCtx, pod, ev)
	cancel()
	d.Outcome, d.Message = r.evictionOutcome(ctx, err, d.Message)
	r.memory.Apply(d)
	if d.Outcome == rules.Evicted || d.Outcome == rules.EvictionRefused {
		return d.Outcome, r.tellEviction(ctx, pod, d, notSteered), nil
	}
	// Not tried, or the pod was gone: the record would hold the pod from a next try all its window.
	r.evictions.Forget(ctx, pod, d)
	if err != nil && !apierrors.IsNotFound(err) {
		return rules.Wait, 0, fmt.Errorf("evicting pod %s: %w", d.Pod, err)
	}
	return rules.Wait, 0, nil
}

// withdrawEviction tells the memory that the eviction was not tried, and takes back its record:
// it would hold the pod from a next try all its window.
func (r *Reconciler) withdrawEviction(ctx context.Context, pod *corev1.Pod, d rules.Decision) {
	d.Outcome = rules.EvictionWithdrawn
	r.memory.Apply(d)
	r.evictions.Forget(ctx, pod, d)
}

// evictionOutcome is what came of the Eviction API call that returned err; msg is kept unless the
// call was refused.
func (r *Reconciler) evictionOutcome(ctx context.Context, err error, msg string) (rules.Outcome, string) {
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return rules.Evicted, msg
	case apierrors.IsNotFound(err):
		return rules.EvictionWithdrawn, msg // gone already
	case errors.As(err, &status):
		return rules.EvictionRefused, refusal(err)
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		return rules.EvictionRefused, fmt.Sprintf("no answer within %s (a PodDisruptionBudget not yet processed by the disruption controller is answered with a retry later)", r.opts.EvictTimeout)
	default:
		return rules.EvictionWithdrawn, msg // the API server not reached: tried again
	}
}

// tellEviction tells an eviction the API server answered (evicted or refused) in the metric, the
// log and the pod's event, and returns when to decide again.
func (r *Reconciler) tellEviction(ctx context.Context, pod *corev1.Pod, d rules.Decision, notSteered string) time.Duration {
	x := d.Failure
	switch d.Outcome {
	case rules.Evicted:
		evictions.WithLabelValues(resultEvicted).Inc()
		steering := ""
		if d.Canary {
			steering = fmt.Sprintf("; the canary of the held restarts of container %s of %s: no other of its pods is restarted or evicted until it is gone",
				x.Container, d.WorkloadRef)
		}
		if notSteered != "" {
			steering += fmt.Sprintf("; its replacement is not steered away from node %s: %s", d.Node, notSteered)
		}
		logf.FromContext(ctx).Info("pod evicted", "pod", d.Pod.String(), "container", x.Container, "containerID", x.ContainerID,
			"steered", notSteered == "")
		r.evictionEvent(ctx, pod, d, corev1.EventTypeNormal, EventEvicted, "Evict",
			"evicted pod %s (container %s, %s, node %s): %s%s", d.Pod, x.Container, x.ContainerID, d.Node, d.Message, steering)
		return 0
	case rules.EvictionRefused:
		evictions.WithLabelValues(resultRefused).Inc()
		r.evictionEvent(ctx, pod, d, corev1.EventTypeWarning, EventEvictionRefused, "Evict",
			"the eviction of pod %s (container %s, node %s) was refused: %s; its restarts stay held (RestartIneffective) and no eviction is tried again within the breaker's window",
			d.Pod, x.Container, d.Node, d.Message)
		return r.opts.HoldRecheckInterval
	}
	return 0
}

// refusal says why the API server refused an eviction: the PodDisruptionBudget's own words when
// one blocks it (a 429 names it in its causes).
func refusal(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return err.Error()
	}
	s := status.Status()
	parts := []string{s.Message}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == policyv1.DisruptionBudgetCause {
				parts = append(parts, c.Message)
			}
		}
	}
	msg := strings.TrimSpace(strings.Join(parts, " "))
	if apierrors.IsTooManyRequests(err) {
		return "PodDisruptionBudget: " + msg
	}
	return fmt.Sprintf("%s (%d %s)", msg, s.Code, s.Reason)
}

// evictionEvent tells an eviction, or its refusal, on the pod and on each policy that governs it.
func (r *Reconciler) evictionEvent(ctx context.Context, pod *corev1.Pod, d rules.Decision, typ, reason, action, format string, args ...any) {
	r.recorder.Eventf(pod, nil, typ, reason, action, format, args...)
	for _, k := range d.StatusPolicies {
		pol := &policyv1alpha1.EnhancedLivenessPolicy{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, pol); err != nil {
			continue // deleted meanwhile: the pod's event tells it
		}
		r.recorder.Eventf(pol, pod, typ, reason, action, format, args...)
	}
}
