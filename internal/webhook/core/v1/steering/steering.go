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

// Package steering keeps a workload's new pods off the nodes where its pods were evicted because
// their restarts did not help there. It only ever adds a preferred node affinity term: the
// scheduler still places the pod on such a node when no other node fits, so a pod is never left
// unschedulable because of it.
package steering

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Weight is the steering term's weight, the highest the API allows: among the nodes that fit,
// one the workload was not evicted from wins over the pod's other preferences.
const Weight = 100

// AvoidedNodes returns, sorted and without repeats, the nodes of the entries that name the pod's
// controller (kind and name) and have not expired at now (now < expires).
func AvoidedNodes(entries []policyv1alpha1.RecentEviction, ownerKind, ownerName string, now time.Time) []string {
	var nodes []string
	for _, e := range entries {
		if e.OwnerKind != ownerKind || e.OwnerName != ownerName || e.Node == "" || !e.LastsAt(now) {
			continue
		}
		nodes = append(nodes, e.Node)
	}
	slices.Sort(nodes)
	return slices.Compact(nodes)
}

// Term is the preferred node affinity term that steers a pod away from nodes (sorted): one
// metadata.name NotIn requirement per node, all of which a node must meet (the API server allows a
// single value in a matchFields requirement).
func Term(nodes []string) corev1.PreferredSchedulingTerm {
	reqs := make([]corev1.NodeSelectorRequirement, 0, len(nodes))
	for _, n := range nodes {
		reqs = append(reqs, corev1.NodeSelectorRequirement{
			Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpNotIn, Values: []string{n}})
	}
	return corev1.PreferredSchedulingTerm{Weight: Weight, Preference: corev1.NodeSelectorTerm{MatchFields: reqs}}
}

// Apply steers the pod away from nodes (sorted, as AvoidedNodes returns them): Term(nodes)
// among its preferred node affinity terms and the AnnotationAvoidedNodes annotation naming them.
// The term the pod's annotation already names (the webhook invoked again on its own output, or a
// pod copied from a steered one) is replaced, never doubled; with no nodes it is removed with the
// annotation. Every other affinity of the pod, required or preferred, is kept as it is.
func Apply(pod *corev1.Pod, nodes []string) {
	if prev, ok := pod.Annotations[appsv1alpha1.AnnotationAvoidedNodes]; ok {
		removeTerm(pod, Term(strings.Split(prev, ",")))
		delete(pod.Annotations, appsv1alpha1.AnnotationAvoidedNodes)
	}
	if len(nodes) == 0 {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[appsv1alpha1.AnnotationAvoidedNodes] = strings.Join(nodes, ",")
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := pod.Spec.Affinity.NodeAffinity
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, Term(nodes))
}

// removeTerm removes the terms equal to term, and the node affinity (then the affinity) it
// leaves empty, so that a pod steered and then unsteered is as it came.
func removeTerm(pod *corev1.Pod, term corev1.PreferredSchedulingTerm) {
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil {
		return
	}
	na := aff.NodeAffinity
	kept := slices.DeleteFunc(na.PreferredDuringSchedulingIgnoredDuringExecution, func(t corev1.PreferredSchedulingTerm) bool {
		return equality.Semantic.DeepEqual(t, term)
	})
	if len(kept) == len(na.PreferredDuringSchedulingIgnoredDuringExecution) {
		return
	}
	na.PreferredDuringSchedulingIgnoredDuringExecution = kept
	if len(kept) == 0 {
		na.PreferredDuringSchedulingIgnoredDuringExecution = nil
		if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			aff.NodeAffinity = nil
		}
	}
	if aff.NodeAffinity == nil && aff.PodAffinity == nil && aff.PodAntiAffinity == nil {
		pod.Spec.Affinity = nil
	}
}
