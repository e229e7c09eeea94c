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

package daemonnodes

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRuns(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{corev1.LabelOSStable: "linux", "zone": "a"}, true},
		{map[string]string{corev1.LabelOSStable: "windows"}, false},
		{nil, false},
	} {
		if got := Runs(tc.labels); got != tc.want {
			t.Errorf("Runs(%v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}

func TestExcluded(t *testing.T) {
	os := corev1.LabelOSStable
	expr := func(op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: os, Operator: op, Values: values}
	}
	affinity := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	term := func(e ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: e}
	}
	other := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want string // a part of the reason; "" when the pod may land on a daemon's node
	}{
		{"no selection", corev1.PodSpec{}, ""},
		{"nodeSelector linux", corev1.PodSpec{NodeSelector: map[string]string{os: "linux"}}, ""},
		{"nodeSelector windows", corev1.PodSpec{NodeSelector: map[string]string{os: "windows"}}, "nodeSelector kubernetes.io/os=windows"},
		{"nodeSelector on another label", corev1.PodSpec{NodeSelector: map[string]string{"zone": "a"}}, ""},
		{"In windows", corev1.PodSpec{Affinity: affinity(term(expr(corev1.NodeSelectorOpIn, "windows")))}, "kubernetes.io/os In [windows]"},
		{"In windows or linux", corev1.PodSpec{Affinity: affinity(term(expr(corev1.NodeSelectorOpIn, "windows", "linux")))}, ""},
		{"NotIn linux", corev1.PodSpec{Affinity: affinity(term(expr(corev1.NodeSelectorOpNotIn, "linux")))}, "NotIn [linux]"},
		{"NotIn windows", corev1.PodSpec{Affinity: affinity(term(expr(corev1.NodeSelectorOpNotIn, "windows")))}, ""},
		{"DoesNotExist", corev1.PodSpec{Affinity: affinity(term(expr(corev1.NodeSelectorOpDoesNotExist)))}, "DoesNotExist"},
		{"Exists", corev1.PodSpec{Affinity: affinity(term(expr(corev1.NodeSelectorOpExists)))}, ""},
		{"every term excludes", corev1.PodSpec{Affinity: affinity(term(expr(corev1.NodeSelectorOpIn, "windows")),
			term(other, expr(corev1.NodeSelectorOpNotIn, "linux")))}, "In [windows]; kubernetes.io/os NotIn [linux]"},
		{"one term may match", corev1.PodSpec{Affinity: affinity(term(expr(corev1.NodeSelectorOpIn, "windows")), term(other))}, ""},
		{"a term decided by matchFields", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}})}, ""},
		{"preferred only", corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}}, ""},
		{"os windows", corev1.PodSpec{OS: &corev1.PodOS{Name: corev1.Windows}},
			"its spec.os.name windows excludes every node the operator's node daemon runs on (kubernetes.io/os=linux)"},
		{"os windows, nodeSelector linux", corev1.PodSpec{OS: &corev1.PodOS{Name: corev1.Windows}, NodeSelector: map[string]string{os: "linux"}},
			"spec.os.name windows"},
		{"os linux", corev1.PodSpec{OS: &corev1.PodOS{Name: corev1.Linux}}, ""},
		{"os empty", corev1.PodSpec{OS: &corev1.PodOS{}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Excluded(&tc.spec)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("Excluded = %q, want one containing %q", got, tc.want)
			}
		})
	}
}
