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
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/patch"
)

// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies/status,verbs=get;patch

// Evictions writes status.recentEvictions for the decision (the restart package's
// EvictionRecords): the entry of an eviction before it is made, since the pod webhook steers the
// replacement only by what the policies' status says when it is created, and out again when the
// eviction was not tried. The status controller only drops the expired entries.
type Evictions struct {
	cache  client.Reader // the policies, as the cache has them
	writer client.Client // writes the status (Options.EvictionWriter)
	api    client.Reader // reads a policy again after a conflict
	opts   Options
}

// Record adds the eviction to status.recentEvictions of each policy that asked for it
// (every enforcing one governs the pod with action Evict), each entry lasting the policy's
// window, on the API server's clock: every replica reads it. It returns why the pod's replacement
// is not steered ("" when every write succeeded): a failed write never stops the eviction, the
// container fails where it is. full: a policy's list keeps rules.MaxRecentEvictions entries that
// last; the eviction must not be made, since no entry is dropped before it expires (a new leader
// would not know of it).
func (w *Evictions) Record(ctx context.Context, pod *corev1.Pod, d rules.Decision) (notSteered string, full bool) {
	at := w.opts.APIClock.Read()
	e := policyv1alpha1.RecentEviction{Pod: pod.Name, PodUID: pod.UID, Node: pod.Spec.NodeName,
		Container: d.Failure.Container, Time: metav1.NewTime(at.ToAPI(d.Seen.At))}
	if owner := metav1.GetControllerOf(pod); owner != nil {
		e.OwnerKind, e.OwnerName = owner.Kind, owner.Name
	}
	var failed []string
	for _, p := range d.Policies {
		if p.IsDefault() || !p.Breaker.Enabled || !p.Breaker.Evict {
			continue
		}
		e.Expires = metav1.NewTime(at.ToAPI(d.Seen.At.Add(p.Breaker.Window)))
		room := true
		err := w.change(ctx, p.Key, func(list []policyv1alpha1.RecentEviction) []policyv1alpha1.RecentEviction {
			var next []policyv1alpha1.RecentEviction
			next, room = rules.RecordEviction(list, e, at.ToAPI(w.opts.Clock.Now()))
			return next
		})
		if !room {
			logf.FromContext(ctx).Info("not evicted: the policy's status.recentEvictions is full of entries that have not expired",
				"pod", d.Pod.String(), "policy", p.Key.String())
			return "", true
		}
		if err != nil {
			logf.FromContext(ctx).Error(err, "the eviction is not recorded in the policy's status.recentEvictions: the replacement of the pod is not steered away from its node",
				"pod", d.Pod.String(), "node", pod.Spec.NodeName, "policy", p.Key.String())
			failed = append(failed, fmt.Sprintf("writing status.recentEvictions of policy %s failed: %v", p.Key, err))
		}
	}
	return strings.Join(failed, "; "), false
}

// Forget takes the pod's entries out of its policies' status.recentEvictions again when
// its eviction was not tried after all.
func (w *Evictions) Forget(ctx context.Context, pod *corev1.Pod, d rules.Decision) {
	for _, p := range d.Policies {
		if p.IsDefault() || !p.Breaker.Evict {
			continue
		}
		err := w.change(ctx, p.Key, func(list []policyv1alpha1.RecentEviction) []policyv1alpha1.RecentEviction {
			return rules.WithoutEviction(list, pod.UID)
		})
		if err != nil && !apierrors.IsNotFound(err) {
			logf.FromContext(ctx).Error(err, "the eviction was not tried, but its entry stays in the policy's status.recentEvictions until it expires",
				"pod", d.Pod.String(), "policy", p.Key.String())
		}
	}
}

// change writes a policy's status.recentEvictions as change makes them, judged again on
// the policy as read from the API server after a conflict, so no other writer's change is lost.
func (w *Evictions) change(ctx context.Context, k rules.PolicyKey,
	change func([]policyv1alpha1.RecentEviction) []policyv1alpha1.RecentEviction) error {
	ctx, cancel := context.WithTimeout(ctx, w.opts.WriteTimeout)
	defer cancel()
	pol := &policyv1alpha1.EnhancedLivenessPolicy{}
	if err := w.cache.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, pol); err != nil {
		return err
	}
	_, err := patch.Status(ctx, w.writer, w.api, pol, func(pol *policyv1alpha1.EnhancedLivenessPolicy) (bool, error) {
		next := change(pol.Status.RecentEvictions)
		if equality.Semantic.DeepEqual(next, pol.Status.RecentEvictions) {
			return false, nil
		}
		pol.Status.RecentEvictions = next
		return true, nil
	})
	return err
}
