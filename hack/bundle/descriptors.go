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
	"slices"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const checkDescriptors = "Descriptors"

// descriptorChecks reports what the olm-spec-descriptors test of `operator-sdk scorecard`
// (bundle/tests/scorecard/config.yaml) fails on and the validator suite does not see: every
// alm-examples object has a spec, and each top-level field of that spec has a spec descriptor of
// its owned CRD with exactly that path (a descriptor of a nested path does not count).
func descriptorChecks(bundle *manifests.Bundle) []Finding {
	var out []Finding
	add := func(format string, args ...any) {
		out = append(out, Finding{Check: checkDescriptors, Level: levelError, Message: fmt.Sprintf(format, args...)})
	}
	raw := bundle.CSV.GetAnnotations()["alm-examples"]
	if raw == "" {
		return nil
	}
	var examples []map[string]any
	if err := json.Unmarshal([]byte(raw), &examples); err != nil {
		add("alm-examples is not a JSON array of objects: %v", err)
		return out
	}
	for _, e := range examples {
		u := unstructured.Unstructured{Object: e}
		gvk := u.GroupVersionKind()
		crds := bundle.CSV.Spec.CustomResourceDefinitions.Owned
		owned := slices.IndexFunc(crds, func(d operatorsv1alpha1.CRDDescription) bool {
			return d.Kind == gvk.Kind && d.Version == gvk.Version
		})
		if owned < 0 {
			add("alm-examples %s %q: no owned CRD of the CSV has this kind and version", gvk, u.GetName())
			continue
		}
		spec, ok := e["spec"].(map[string]any)
		if !ok {
			add("alm-examples %s %q has no spec", gvk.Kind, u.GetName())
			continue
		}
		descs := crds[owned].SpecDescriptors
		for _, k := range slices.Sorted(maps.Keys(spec)) {
			if !slices.ContainsFunc(descs, func(d operatorsv1alpha1.SpecDescriptor) bool { return d.Path == k }) {
				add("alm-examples %s %q: spec.%s has no spec descriptor with path %q", gvk.Kind, u.GetName(), k, k)
			}
		}
	}
	return out
}
