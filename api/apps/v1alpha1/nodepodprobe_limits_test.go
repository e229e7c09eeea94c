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

package v1alpha1

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// schemaLimits walks an OpenAPI schema and returns every size limit in it, keyed
// "<json path> <keyword>".
func schemaLimits(schema map[string]any, path string, out map[string]int) {
	if path == ".status.conditions" {
		return // metav1.Condition's own limits, which the manager's condition always meets
	}
	for _, kw := range []string{"maxItems", "maxLength", "minItems", "minLength", "maxProperties", "minProperties"} {
		if v, ok := schema[kw]; ok {
			out[path+" "+kw] = int(v.(float64))
		}
	}
	if _, ok := schema["pattern"]; ok {
		out[path+" pattern"] = -1 // no pattern is expected: the test fails and names it
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		for name, sub := range props {
			schemaLimits(sub.(map[string]any), path+"."+name, out)
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		schemaLimits(items, path+"[]", out)
	}
}

// crdLimits reads the size limits of the generated CRD of the given file in config/crd/bases.
func crdLimits(t *testing.T, file string) map[string]int {
	t.Helper()
	data, err := os.ReadFile("../../../config/crd/bases/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != "v1alpha1" {
		t.Fatalf("%s versions: %+v", file, crd.Spec.Versions)
	}
	got := map[string]int{}
	schemaLimits(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, "", got)
	return got
}

// diffLimits lists how the limits of a CRD differ from the constants that should make them.
func diffLimits(got, want map[string]int) []string {
	var diffs []string
	for k, v := range got {
		if w, ok := want[k]; !ok || w != v {
			diffs = append(diffs, fmt.Sprintf("CRD %s = %d, constant: %v", k, v, map[bool]any{true: w, false: "none"}[ok]))
		}
	}
	for k, w := range want {
		if _, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("CRD has no %s (constant %d)", k, w))
		}
	}
	slices.Sort(diffs)
	return diffs
}

// The generated CRDs hold exactly the limits of the Go constants the webhook, the mapping
// controller and the daemon check against: a marker changed without its constant (or a new one
// without a constant) fails here. The NodePodProbe holds the spec, its report the results.
func TestNodePodProbeCRDLimitsAreTheConstants(t *testing.T) {
	const pp = ".spec.podProbes[]"
	spec := map[string]int{
		".spec.podProbes maxItems":  MaxPodProbesPerNode,
		pp + ".name minLength":      1,
		pp + ".name maxLength":      MaxPodNameLength,
		pp + ".namespace minLength": 1,
		pp + ".namespace maxLength": MaxNamespaceLength,
		pp + ".uid minLength":       1,
	}
	results := map[string]int{
		".status.podProbeStatuses maxItems":                          MaxPodProbesPerNode,
		".status.podProbeStatuses[].probeStates maxItems":            MaxProbesPerPod,
		".status.podProbeStatuses[].probeStates[].message maxLength": MaxProbeMessageLength,
		".status.podProbeStatuses[].notProbed maxLength":             MaxPodNotProbedLength,
		".status.omittedNamespaces maxItems":                         MaxPodProbesPerNode,
		".status.omittedNamespaces[] maxLength":                      MaxNamespaceLength,
	}
	for file, want := range map[string]map[string]int{
		"apps.enhancedliveness.io_nodepodprobes.yaml":       spec,
		"apps.enhancedliveness.io_nodepodprobereports.yaml": results,
	} {
		if diffs := diffLimits(crdLimits(t, file), want); len(diffs) > 0 {
			t.Errorf("%s and the limits of nodepodprobe_limits.go differ:\n%s", file, strings.Join(diffs, "\n"))
		}
	}
}

func TestValidatePodProbe(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*PodProbe)
		errors []string
	}{
		{name: "valid", edit: func(*PodProbe) {}},
		{name: "longest names", edit: func(p *PodProbe) {
			p.Name, p.Namespace = strings.Repeat("a", MaxPodNameLength), strings.Repeat("n", MaxNamespaceLength)
		}},
		{name: "empty names and uid", edit: func(p *PodProbe) { p.Name, p.Namespace, p.UID = "", "", "" },
			errors: []string{"spec.podProbes[3].name: Required value", "spec.podProbes[3].namespace: Required value",
				"spec.podProbes[3].uid: Required value"}},
		{name: "long names", edit: func(p *PodProbe) {
			p.Name, p.Namespace = strings.Repeat("a", 254), strings.Repeat("n", 64)
		}, errors: []string{
			"spec.podProbes[3].name: Too long: may not be more than 253 bytes",
			"spec.podProbes[3].namespace: Too long: may not be more than 63 bytes",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PodProbe{Name: "web", Namespace: "shop", UID: "u1"}
			tt.edit(&p)
			errs := ValidatePodProbe(&p, field.NewPath("spec", "podProbes").Index(3))
			if len(errs) != len(tt.errors) {
				t.Fatalf("got %d errors, want %d: %v", len(errs), len(tt.errors), errs)
			}
			for i, want := range tt.errors {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i].Error(), want)
				}
			}
		})
	}
}
