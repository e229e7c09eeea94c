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

package admissionpolicy

import (
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// During an uninstall the CRDs go first and the garbage collector removes the policy and the
// binding they own; a manager still running must not bring them back without an owner.
func TestReconcileAppliesNothingWithoutALiveOwnerCRD(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	deleting := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: OwnerCRD, UID: "crd-uid",
		DeletionTimestamp: &metav1.Time{Time: time.Now()}, Finalizers: []string{"customresourcecleanup.apiextensions.k8s.io"}}}
	for name, objs := range map[string][]client.Object{
		"CRD gone":          nil,
		"CRD being deleted": {deleting},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
			r := &Reconciler{Client: c, APIReader: c, OperatorUsername: "system:serviceaccount:ns:mgr"}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			var policies admissionregistrationv1.ValidatingAdmissionPolicyList
			var bindings admissionregistrationv1.ValidatingAdmissionPolicyBindingList
			if err := c.List(context.Background(), &policies); err != nil {
				t.Fatal(err)
			}
			if err := c.List(context.Background(), &bindings); err != nil {
				t.Fatal(err)
			}
			if len(policies.Items)+len(bindings.Items) != 0 {
				t.Errorf("applied %d policies and %d bindings without a live owner CRD", len(policies.Items), len(bindings.Items))
			}
		})
	}
}
