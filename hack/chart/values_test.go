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
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
)

// `helm show values` (values.yaml) and values.schema.json agree: every value is a key of the
// schema, of its type and within its enum, pattern and bounds; every key of the schema that is
// not a flag (which may be left out: null) has a value, unless its parent's default is empty.
func TestShowValuesMatchSchema(t *testing.T) {
	out, err := exec.Command(helmBinary(t), "show", "values", filepath.Join(repoRoot, chartDir)).Output()
	if err != nil {
		t.Fatalf("helm show values: %v", err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(out, &values); err != nil {
		t.Fatal(err)
	}
	s := committedSchema(t)
	for _, p := range valueSchemaProblems("", s, values, true) {
		t.Error(p)
	}
}

// The check itself finds each kind of disagreement.
func TestValueSchemaProblems(t *testing.T) {
	s := &schema{Type: typeObject, Properties: map[string]*schema{
		"a":    {Type: typeString, Enum: []string{"x", "y"}},
		"n":    {Type: "integer", Minimum: new(1)},
		"flag": {Type: []any{"boolean", "null"}},
		"obj":  {Type: typeObject, Properties: map[string]*schema{"k": {Type: "boolean"}}},
		"d":    {Type: typeString, Pattern: "^(sha256:[a-f0-9]{64})?$"},
	}}
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"agree", map[string]any{"a": "x", "n": 2.0, "obj": map[string]any{"k": true}, "d": ""}, ""},
		{"a value the schema does not have", map[string]any{"a": "x", "n": 2.0, "obj": map[string]any{}, "d": "", "b": 1.0}, "b: in values.yaml, not in the schema"},
		{"a key of the schema without a value", map[string]any{"n": 2.0, "obj": map[string]any{}, "d": ""}, "a: in the schema, not in values.yaml"},
		{"a value of another type", map[string]any{"a": "x", "n": "2", "obj": map[string]any{}, "d": ""}, "n: values.yaml has"},
		{"a value outside the enum", map[string]any{"a": "z", "n": 2.0, "obj": map[string]any{}, "d": ""}, "a: \"z\" is not one of"},
		{"a value below the minimum", map[string]any{"a": "x", "n": 0.0, "obj": map[string]any{}, "d": ""}, "n: 0 is below the minimum 1"},
		{"a value against the pattern", map[string]any{"a": "x", "n": 2.0, "obj": map[string]any{}, "d": "latest"}, "d: \"latest\" does not match"},
		{"a flag of another type", map[string]any{"a": "x", "n": 2.0, "obj": map[string]any{}, "d": "", "flag": "yes"}, "flag: values.yaml has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(valueSchemaProblems("", s, tc.values, true), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("problems = %q, want %q", got, tc.want)
			}
		})
	}
}

// The committed README.md is what hack/chart writes from the committed schema and values.yaml.
func TestChartREADMEIsCurrent(t *testing.T) {
	want, err := chartREADME(filepath.Join(repoRoot, chartDir))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(repoRoot, chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s/README.md is not what `make chart` writes from values.schema.json and values.yaml: run make chart", chartDir)
	}
	for _, key := range []string{"`image.repository`", "`manager.flags.default-max-hold`", "`daemon.criticalPodsQuota`"} {
		if !strings.Contains(want, key) {
			t.Errorf("README.md has no row for %s", key)
		}
	}
}

// GKE admits the daemon's system-node-critical pods outside kube-system only beside a
// ResourceQuota scoped to that PriorityClass: config/default and the chart (by default) carry
// one in the operator's namespace, for the class the manager gives the DaemonSet; the value
// daemon.criticalPodsQuota=false leaves it out.
func TestDaemonPriorityClassQuota(t *testing.T) {
	objs, err := kustomizeBuild(filepath.Join(repoRoot, "bin", "kustomize"), filepath.Join(repoRoot, defaultConfig))
	if err != nil {
		t.Fatal(err)
	}
	checkQuota(t, "config/default", objs, installNamespace)
	_, objs, err = renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkQuota(t, "the chart", objs, "ops")
	_, objs, err = renderChart(t, map[string]any{"daemon": map[string]any{"criticalPodsQuota": false}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if kindOf(o) == "ResourceQuota" {
			t.Errorf("ResourceQuota %s rendered with daemon.criticalPodsQuota=false", nameOf(o))
		}
	}
}

func checkQuota(t *testing.T, where string, objs []map[string]any, namespace string) {
	t.Helper()
	for _, o := range objs {
		if kindOf(o) != "ResourceQuota" {
			continue
		}
		b, _ := json.Marshal(o)
		var q struct {
			Metadata struct{ Namespace string } `json:"metadata"`
			Spec     struct {
				Hard          map[string]string `json:"hard"`
				ScopeSelector struct {
					MatchExpressions []struct {
						ScopeName, Operator string
						Values              []string
					} `json:"matchExpressions"`
				} `json:"scopeSelector"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		m := q.Spec.ScopeSelector.MatchExpressions
		if q.Metadata.Namespace == namespace && len(m) == 1 && m[0].ScopeName == "PriorityClass" &&
			m[0].Operator == "In" && slices.Equal(m[0].Values, []string{daemonset.PriorityClass}) {
			return
		}
	}
	t.Errorf("%s: no ResourceQuota in namespace %s scoped to PriorityClass In [%s]", where, namespace, daemonset.PriorityClass)
}

func committedSchema(t *testing.T) *schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// valueSchemaProblems compares the values under prefix with their schema s, both ways.
func valueSchemaProblems(prefix string, s *schema, values map[string]any, top bool) []string {
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		key, v := prefix+k, values[k]
		p, ok := s.Properties[k]
		if !ok {
			if extra, isSchema := s.AdditionalProperties.(map[string]any); isSchema {
				p = schemaOf(extra)
			} else {
				problems = append(problems, key+": in values.yaml, not in the schema")
				continue
			}
		}
		problems = append(problems, valueProblems(key, p, v)...)
		if sub, isMap := v.(map[string]any); isMap && len(p.Properties) > 0 {
			problems = append(problems, valueSchemaProblems(key+".", p, sub, false)...)
		}
	}
	// Keys of the schema without a value: only flags (null leaves them out), Helm's global, and
	// the keys of an object whose default is empty may go without.
	if len(values) > 0 || top {
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			if _, ok := values[k]; !ok && (!top || k != "global") && !slices.Contains(typeNames(s.Properties[k]), "null") {
				problems = append(problems, prefix+k+": in the schema, not in values.yaml")
			}
		}
	}
	return problems
}

// valueProblems checks one value against its schema: type, enum, pattern, minimum, minLength.
func valueProblems(key string, s *schema, v any) []string {
	if types := typeNames(s); len(types) > 0 && !slices.Contains(types, jsonType(v)) &&
		(jsonType(v) != "integer" || !slices.Contains(types, "number")) {
		return []string{fmt.Sprintf("%s: values.yaml has %s %v, the schema says %s", key, jsonType(v), v, strings.Join(types, " or "))}
	}
	var problems []string
	if str, _ := v.(string); len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
		problems = append(problems, fmt.Sprintf("%s: %q is not one of %v", key, v, s.Enum))
	}
	if str, ok := v.(string); ok {
		if s.Pattern != "" && !regexp.MustCompile(s.Pattern).MatchString(str) {
			problems = append(problems, fmt.Sprintf("%s: %q does not match %s", key, str, s.Pattern))
		}
		if len(str) < s.MinLength {
			problems = append(problems, fmt.Sprintf("%s: %q is shorter than %d", key, str, s.MinLength))
		}
	}
	if n, ok := v.(float64); ok && s.Minimum != nil && n < float64(*s.Minimum) {
		problems = append(problems, fmt.Sprintf("%s: %v is below the minimum %d", key, n, *s.Minimum))
	}
	return problems
}

func typeNames(s *schema) []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		var names []string
		for _, n := range t {
			names = append(names, fmt.Sprint(n))
		}
		return names
	case []string:
		return t
	}
	return nil
}

// jsonType is the JSON Schema type of a value decoded from YAML.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return typeString
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case []any:
		return typeArray
	case map[string]any:
		return typeObject
	}
	return fmt.Sprintf("%T", v)
}

func schemaOf(m map[string]any) *schema {
	b, _ := json.Marshal(m)
	var s schema
	_ = json.Unmarshal(b, &s)
	return &s
}
