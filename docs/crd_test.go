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

package docs

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestCRDEnumsAreDescribed: a field with a fixed set of values names every value in its
// description, which is what `kubectl explain` and the API reference show.
func TestCRDEnumsAreDescribed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRD in config/crd/bases: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd map[string]any
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatal(err)
		}
		versions, _ := dig(crd, "spec", "versions").([]any)
		for _, v := range versions {
			schema := dig(v, "schema", "openAPIV3Schema")
			for _, missing := range undescribedEnums(schema, "") {
				t.Errorf("%s: %s", filepath.Base(f), missing)
			}
		}
	}
}

// undescribedEnums walks a schema and reports each enum value its field's description omits.
func undescribedEnums(schema any, path string) []string {
	s, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	if enum, ok := s["enum"].([]any); ok {
		desc, _ := s["description"].(string)
		for _, v := range enum {
			word := regexp.MustCompile(`\b` + regexp.QuoteMeta(fmt.Sprint(v)) + `\b`)
			if !word.MatchString(desc) {
				out = append(out, fmt.Sprintf("%s: the description does not name the value %q", path, v))
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		out = append(out, undescribedEnums(props[name], path+"."+name)...)
	}
	out = append(out, undescribedEnums(s["items"], path+"[]")...)
	return out
}

// dig follows map keys through decoded YAML.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
