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
	"os"
	"testing"

	"sigs.k8s.io/yaml"
)

// The CRD's bound on status.heldPods[].message is the constant the policy status cuts a message
// to: a marker changed without the constant would have the API server refuse the whole status.
func TestHeldPodMessageMaxLengthIsTheConstant(t *testing.T) {
	data, err := os.ReadFile("../../../config/crd/bases/policy.enhancedliveness.io_enhancedlivenesspolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type schema struct {
		Properties map[string]schema `json:"properties"`
		Items      *schema           `json:"items"`
		MaxLength  *int              `json:"maxLength"`
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema schema `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("versions: %d", len(crd.Spec.Versions))
	}
	held := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["heldPods"].Items
	if held == nil {
		t.Fatal("the CRD has no status.heldPods items")
	}
	got := held.Properties["message"].MaxLength
	if got == nil || *got != MaxHeldPodMessageLength {
		t.Fatalf("status.heldPods[].message maxLength %v, want MaxHeldPodMessageLength %d", got, MaxHeldPodMessageLength)
	}
}
