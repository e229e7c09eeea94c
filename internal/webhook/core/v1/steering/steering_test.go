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

package steering

import (
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

func TestAvoidedNodes(t *testing.T) {
	now := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	entry := func(kind, name, node string, expiresIn time.Duration) policyv1alpha1.RecentEviction {
		return policyv1alpha1.RecentEviction{Pod: "p", OwnerKind: kind, OwnerName: name, Node: node, Container: "app",
			Time: metav1.NewTime(now.Add(-time.Minute)), Expires: metav1.NewTime(now.Add(expiresIn))}
	}
	for _, tc := range []struct {
		name    string
		entries []policyv1alpha1.RecentEviction
		want    []string
	}{
		{"none", nil, nil},
		{"the owner's unexpired entry", []policyv1alpha1.RecentEviction{entry("ReplicaSet", "web-1", "node-a", time.Minute)}, []string{"node-a"}},
		{"sorted, without repeats", []policyv1alpha1.RecentEviction{
			entry("ReplicaSet", "web-1", "node-c", time.Minute),
			entry("ReplicaSet", "web-1", "node-a", time.Minute),
			entry("ReplicaSet", "web-1", "node-c", 2*time.Minute),
		}, []string{"node-a", "node-c"}},
		{"another owner's name", []policyv1alpha1.RecentEviction{entry("ReplicaSet", "web-2", "node-a", time.Minute)}, nil},
		{"another owner's kind", []policyv1alpha1.RecentEviction{entry("StatefulSet", "web-1", "node-a", time.Minute)}, nil},
		{"an entry without an owner", []policyv1alpha1.RecentEviction{entry("", "", "node-a", time.Minute)}, nil},
		{"expired", []policyv1alpha1.RecentEviction{entry("ReplicaSet", "web-1", "node-a", -time.Second)}, nil},
		{"expiring now", []policyv1alpha1.RecentEviction{entry("ReplicaSet", "web-1", "node-a", 0)}, nil},
		{"one expired, one not", []policyv1alpha1.RecentEviction{
			entry("ReplicaSet", "web-1", "node-a", -time.Second),
			entry("ReplicaSet", "web-1", "node-b", time.Second),
		}, []string{"node-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AvoidedNodes(tc.entries, "ReplicaSet", "web-1", now); !slices.Equal(got, tc.want) {
				t.Fatalf("AvoidedNodes = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestApply(t *testing.T) {
	own := corev1.PreferredSchedulingTerm{Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
		Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}
	required := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
		Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}}}
	antiAffinity := &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
		Weight: 50, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}}
	steered := func(nodes string) map[string]string {
		return map[string]string{"team": "shop", appsv1alpha1.AnnotationAvoidedNodes: nodes}
	}
	mine := map[string]string{"team": "shop"}
	for _, tc := range []struct {
		name      string
		aff       *corev1.Affinity
		ann       map[string]string
		nodes     []string
		wantAff   *corev1.Affinity
		wantAnnot map[string]string
	}{
		{"no nodes: nothing changes", nil, mine, nil, nil, mine},
		{"no affinity", nil, mine, []string{"a", "b"},
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{Term([]string{"a", "b"})}}},
			steered("a,b")},
		{"no annotations", nil, nil, []string{"a"},
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{Term([]string{"a"})}}},
			map[string]string{appsv1alpha1.AnnotationAvoidedNodes: "a"}},
		{"the pod's own terms, required and preferred, and pod anti-affinity kept",
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required,
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{own}}, PodAntiAffinity: antiAffinity},
			mine, []string{"a"},
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required,
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{own, Term([]string{"a"})}}, PodAntiAffinity: antiAffinity},
			steered("a")},
		{"invoked again on its own output: one term",
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{own, Term([]string{"a"})}}},
			steered("a"), []string{"a"},
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{own, Term([]string{"a"})}}},
			steered("a")},
		{"copied from a pod steered from other nodes: replaced",
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{Term([]string{"a", "c"}), own}}},
			steered("a,c"), []string{"b"},
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{own, Term([]string{"b"})}}},
			steered("b")},
		{"steered before, nothing to avoid now: as it came",
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{Term([]string{"a"})}}},
			steered("a"), nil, nil, mine},
		{"steered before, nothing to avoid now: the pod's own affinity kept",
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required,
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{Term([]string{"a"})}}},
			steered("a"), nil,
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required}},
			mine},
		{"an annotation naming no term of the pod: the pod's terms kept",
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{own}}},
			steered("z"), []string{"a"},
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{own, Term([]string{"a"})}}},
			steered("a")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: maps.Clone(tc.ann)}, Spec: corev1.PodSpec{Affinity: tc.aff.DeepCopy()}}
			Apply(pod, tc.nodes)
			if !equality.Semantic.DeepEqual(pod.Spec.Affinity, tc.wantAff) {
				t.Errorf("affinity = %+v, want %+v", pod.Spec.Affinity, tc.wantAff)
			}
			if !equality.Semantic.DeepEqual(pod.Annotations, tc.wantAnnot) {
				t.Errorf("annotations = %v, want %v", pod.Annotations, tc.wantAnnot)
			}
			again := pod.DeepCopy()
			Apply(again, tc.nodes)
			if !equality.Semantic.DeepEqual(again, pod) {
				t.Errorf("applied twice: %+v, once: %+v", again.Spec.Affinity, pod.Spec.Affinity)
			}
		})
	}
}

func TestTerm(t *testing.T) {
	term := Term([]string{"a", "b"})
	want := corev1.PreferredSchedulingTerm{Weight: 100, Preference: corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
		{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"a"}},
		{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"b"}},
	}}}
	if !equality.Semantic.DeepEqual(term, want) {
		t.Fatalf("Term = %+v", term)
	}
}
