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

package main

import (
	"slices"
	"strings"
	"testing"
)

func TestCanonicalArgs(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []any
		want []string
	}{
		{"a bare boolean is =true", []any{"--leader-elect"}, []string{"--leader-elect=true"}},
		{"one dash is two", []any{"-leader-elect=false"}, []string{"--leader-elect=false"}},
		{"sorted by name", []any{"--webhook-port=9443", "--cert-mode=self"}, []string{"--cert-mode=self", "--webhook-port=9443"}},
		{"a repeated flag keeps its order", []any{"--daemon-arg=--b=1", "--cert-mode=self", "--daemon-arg=--a=2"},
			[]string{"--cert-mode=self", "--daemon-arg=--b=1", "--daemon-arg=--a=2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, a := range canonicalArgs(c.in) {
				got = append(got, a.(string))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("canonicalArgs(%v) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

func manager(image string, args ...any) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": managerDeployment, "namespace": installNamespace,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "Helm", "control-plane": "controller-manager"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": managerContainer, "image": image, "args": args},
		}}}},
	}
}

func TestCompare(t *testing.T) {
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": installNamespace}}
	crd := func(keep bool) map[string]any {
		ann := map[string]any{"controller-gen.kubebuilder.io/version": "v0.22.0"}
		if keep {
			ann["helm.sh/resource-policy"] = "keep"
		}
		return map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "x.example", "annotations": ann}}
	}
	for _, c := range []struct {
		name            string
		kustomize, helm []map[string]any
		want            []string // a substring of each problem, in order
	}{
		{"the same objects", []map[string]any{ns, crd(false), manager("controller:latest", "--leader-elect", "--cert-mode=self")},
			[]map[string]any{crd(true), manager("ghcr.io/x:v1", "--cert-mode=self", "--leader-elect=true")}, nil},
		{"a missing object", []map[string]any{crd(false), manager("c")}, []map[string]any{manager("c")},
			[]string{"missing from the chart: apiextensions.k8s.io/v1 CustomResourceDefinition /x.example"}},
		{"an extra object", []map[string]any{manager("c")}, []map[string]any{crd(true), manager("c")},
			[]string{"only in the chart: apiextensions.k8s.io/v1 CustomResourceDefinition /x.example"}},
		{"a different flag", []map[string]any{manager("c", "--webhook-port=9443")}, []map[string]any{manager("c", "--webhook-port=9444")},
			[]string{"apps/v1 Deployment enhanced-liveness-system/enhanced-liveness-operator-controller-manager differs"}},
		{"a missing flag", []map[string]any{manager("c", "--leader-elect", "--cert-mode=self")}, []map[string]any{manager("c", "--cert-mode=self")},
			[]string{"differs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := compare(c.kustomize, c.helm)
			if len(got) != len(c.want) {
				t.Fatalf("compare: %d problems, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestRenderReplacesPlaceholders(t *testing.T) {
	y := "metadata:\n  labels:\n    a: b\n    " + placeholder("LABELS") + ": \"\"\n  namespace: " + namespacePlaceholder +
		"\nspec:\n  description: use {{ .Values }} here\n"
	got := render(y, map[string]block{"LABELS": func(indent string) string { return indent + "L" }})
	want := "metadata:\n  labels:\n    a: b\n    L\n  namespace: {{ .Release.Namespace }}\nspec:\n" +
		"  description: use {{ \"{{\" }} .Values }} here\n"
	if got != want {
		t.Errorf("render:\n%s\nwant:\n%s", got, want)
	}
}
