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

package managercache

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

func TestOptions(t *testing.T) {
	pod := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
	}
	for _, strip := range []bool{true, false} {
		opts := Options(Config{OperatorNamespace: "ops", Strip: strip})
		if (opts.DefaultTransform != nil) != strip {
			t.Errorf("strip=%v: DefaultTransform set = %v", strip, opts.DefaultTransform != nil)
		}
		by := map[string]cache.ByObject{}
		for obj, o := range opts.ByObject {
			switch obj.(type) {
			case *corev1.Pod:
				by["pods"] = o
			case *appsv1.DaemonSet:
				by["daemonsets"] = o
			case *coordinationv1.Lease:
				by["leases"] = o
			case *admissionregistrationv1.ValidatingAdmissionPolicy:
				by["policies"] = o
			case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
				by["bindings"] = o
			case *corev1.ConfigMap:
				by["configmaps"] = o
			}
		}
		// Pods, the DaemonSet, the Leases, the admission policies and their bindings, the trust
		// ConfigMap.
		if len(by) != 6 || len(opts.ByObject) != 6 {
			t.Fatalf("strip=%v: ByObject has %d entries: %v", strip, len(opts.ByObject), opts.ByObject)
		}
		if l := by["pods"].Label; l == nil || l.String() != "enhancedliveness.io/enrolled=true" {
			t.Errorf("strip=%v: pod label selector %v", strip, l)
		}
		for _, kind := range []string{"daemonsets", "policies", "bindings"} {
			if l := by[kind].Label; l == nil || l.String() != "app.kubernetes.io/managed-by=enhanced-liveness-operator" {
				t.Errorf("strip=%v: %s label selector %v", strip, kind, l)
			}
		}
		if f := by["configmaps"].Field; f == nil || f.String() != "metadata.name=enhanced-liveness-operator-probe-trust" {
			t.Errorf("strip=%v: configmap field selector %v", strip, f)
		}
		for _, kind := range []string{"daemonsets", "leases", "configmaps"} {
			if _, ok := by[kind].Namespaces["ops"]; !ok || len(by[kind].Namespaces) != 1 {
				t.Errorf("strip=%v: %s namespaces %v, want only the operator namespace", strip, kind, by[kind].Namespaces)
			}
		}
		if !strip {
			if by["pods"].Transform != nil {
				t.Errorf("strip=false: pods are transformed")
			}
			continue
		}
		out, err := by["pods"].Transform(pod())
		if err != nil {
			t.Fatal(err)
		}
		p := out.(*corev1.Pod)
		if p.ManagedFields != nil || p.Spec.Containers[0].Image != "" || p.Spec.NodeName != "n1" {
			t.Errorf("strip=true: cached pod %+v", p)
		}
	}
}
