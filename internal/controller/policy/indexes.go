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

package policy

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// Field indexes on the manager cache.
const (
	indexPodController = "enhancedliveness.controllerUID" // pods and ReplicaSets by controller UID
	indexPodNode       = "enhancedliveness.nodeName"      // pods by spec.nodeName
	indexCRRPod        = "enhancedliveness.podUID"        // CRRs by the pod they restart
)

// controllerUID, crrPodUID and podNode are the cache index functions.
func controllerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

func crrPodUID(obj client.Object) []string {
	crr, ok := obj.(*appsv1alpha1.ContainerRecreateRequest)
	if !ok {
		return nil
	}
	if uid := crr.Labels[appsv1alpha1.LabelCRRPodUID]; uid != "" {
		return []string{uid}
	}
	// A request made without the webhook: fall back to the pod owner reference.
	for _, ref := range crr.OwnerReferences {
		if ref.Kind == "Pod" && ref.APIVersion == "v1" {
			return []string{string(ref.UID)}
		}
	}
	return nil
}

func podNode(obj client.Object) []string {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}
	}
	return nil
}
