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

package ssa

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestManagerDeployment(t *testing.T) {
	mgr := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "op", Name: "mgr", UID: "u-1"}}
	c := fake.NewClientBuilder().WithObjects(mgr).Build()
	for _, tc := range []struct {
		name, namespace, deployment string
		want                        bool
	}{
		{"no Deployment named: no owner", "op", "", false},
		{"none there (make run): no owner", "op", "other", false},
		{"the manager's", "op", "mgr", true},
	} {
		d, err := ManagerDeployment(t.Context(), c, tc.namespace, tc.deployment)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := d != nil; got != tc.want {
			t.Errorf("%s: found %v, want %v", tc.name, got, tc.want)
		}
	}
	ref := OwnedBy(mgr)
	if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != "mgr" || ref.UID != "u-1" ||
		ref.Controller == nil || !*ref.Controller {
		t.Errorf("OwnedBy = %+v, want the Deployment mgr as controller", ref)
	}
}
