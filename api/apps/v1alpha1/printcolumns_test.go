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
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The API server prints an empty cell for a column whose JSONPath names no field, and nothing
// fails: a column left behind when its field moves (as the results moved from the NodePodProbe
// to its report) shows blanks forever. Every column of every generated CRD must read a field
// of its schema, of the column's type.

// filter is a JSONPath filter on a list ([?(@.type=="Mapped")]) or an index ([0]): it selects
// items of the list.
var filter = regexp.MustCompile(`\[\?\([^)]*\)\]|\[[0-9]+\]`)

// columnField walks a printer column's JSONPath through an OpenAPI schema and returns the schema
// of the field it reads, nil when there is none. metadata is the API server's, not in the schema.
func columnField(schema map[string]any, jsonPath string) (map[string]any, bool) {
	if strings.HasPrefix(jsonPath, ".metadata.") {
		return nil, true
	}
	// A filter has dots of its own (@.type): mark the list it selects before splitting.
	jsonPath = filter.ReplaceAllString(jsonPath, "[]")
	for seg := range strings.SplitSeq(strings.TrimPrefix(jsonPath, "."), ".") {
		seg, list := strings.CutSuffix(seg, "[]")
		props, _ := schema["properties"].(map[string]any)
		next, ok := props[seg].(map[string]any)
		if !ok {
			return nil, false
		}
		if list {
			if next, ok = next["items"].(map[string]any); !ok {
				return nil, false
			}
		}
		schema = next
	}
	return schema, true
}

func TestPrinterColumnsReadFieldsOfTheSchema(t *testing.T) {
	files, err := filepath.Glob("../../../config/crd/bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	// The schema type each column type prints; a date is a string of format date-time.
	columnType := map[string]string{"date": "string"}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Names    struct{ Kind string }
				Versions []struct {
					Name    string
					Columns []struct {
						Name     string
						Type     string
						JSONPath string `json:"jsonPath"`
					} `json:"additionalPrinterColumns"`
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					}
				}
			}
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			if len(v.Columns) == 0 {
				t.Errorf("%s %s has no printer columns", crd.Spec.Names.Kind, v.Name)
			}
			for _, c := range v.Columns {
				field, ok := columnField(v.Schema.OpenAPIV3Schema, c.JSONPath)
				switch {
				case !ok:
					t.Errorf("%s %s column %s reads %s, which the schema does not have", crd.Spec.Names.Kind, v.Name, c.Name, c.JSONPath)
				case field != nil && field["type"] != cmp.Or(columnType[c.Type], c.Type):
					t.Errorf("%s %s column %s (type %s) reads %s of type %v", crd.Spec.Names.Kind, v.Name, c.Name, c.Type, c.JSONPath, field["type"])
				}
			}
		}
	}
}

// The walk itself: a field that moved away is found missing, a filtered list reads its items.
func TestColumnField(t *testing.T) {
	object := func(props map[string]any) map[string]any { return map[string]any{"properties": props} }
	typed := func(typ string) map[string]any { return map[string]any{"type": typ} }
	schema := object(map[string]any{"status": object(map[string]any{
		"probedPods": typed("integer"),
		"conditions": map[string]any{"type": "array", "items": object(map[string]any{"status": typed("string")})},
	})})
	for path, want := range map[string]any{
		".status.probedPods":                             "integer",
		`.status.conditions[?(@.type=="Mapped")].status`: "string",
		".status.failingProbes":                          nil,
		".spec.podProbes":                                nil,
		".status.conditions.status":                      nil,
		".status.conditions[0].status":                   "string",
	} {
		field, ok := columnField(schema, path)
		if got := map[bool]any{true: field["type"], false: nil}[ok]; got != want {
			t.Errorf("%s: got %v, want %v", path, got, want)
		}
	}
}
