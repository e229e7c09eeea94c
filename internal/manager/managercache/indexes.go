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
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// Field indexes of the manager's cache.
const (
	// PodByNode indexes the cached (enrolled) pods by spec.nodeName.
	PodByNode = "enhancedliveness.pod.nodeName"
	// ByController indexes pods and ReplicaSets by the UID of their controller owner.
	ByController = "enhancedliveness.controllerUID"
	// CRRByPod indexes ContainerRecreateRequests by the UID of the pod they restart.
	CRRByPod = "enhancedliveness.crr.podUID"
	// PodByTrustKey indexes the cached (enrolled) pods by the ID of the key that sealed them, or
	// that signed their admission while they are not sealed yet.
	PodByTrustKey = "enhancedliveness.pod.trustKey"
)

// AddIndexes registers every field index on the manager's cache. It runs once, before the
// controllers that query the indexes are set up; controllers never register indexes of their
// own, so two of them cannot index the same informer twice.
func AddIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	for _, i := range []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&corev1.Pod{}, PodByNode, PodNode},
		{&corev1.Pod{}, ByController, ControllerUID},
		{&corev1.Pod{}, PodByTrustKey, TrustKeyID},
		{&appsv1.ReplicaSet{}, ByController, ControllerUID},
		{&appsv1alpha1.ContainerRecreateRequest{}, CRRByPod, CRRPodUID},
	} {
		if err := idx.IndexField(ctx, i.obj, i.field, i.fn); err != nil {
			return err
		}
	}
	return nil
}

// PodNode returns a pod's node, once it is scheduled.
func PodNode(obj client.Object) []string {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}
	}
	return nil
}

// TrustKeyID returns the ID of the key a pod's seal names, else the one its admission signature
// names (not sealed yet).
func TrustKeyID(obj client.Object) []string {
	if id := signature.SealKeyID(obj); id != "" {
		return []string{id}
	}
	if id := signature.AdmissionKeyID(obj); id != "" {
		return []string{id}
	}
	return nil
}

// ControllerUID returns the UID of an object's controller owner.
func ControllerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// CRRPodUID returns the UID of the pod a ContainerRecreateRequest restarts: its pod-uid label (set
// by the webhook), else its pod owner reference (a request made without the webhook).
func CRRPodUID(obj client.Object) []string {
	crr, ok := obj.(*appsv1alpha1.ContainerRecreateRequest)
	if !ok {
		return nil
	}
	if uid := crr.Labels[appsv1alpha1.LabelCRRPodUID]; uid != "" {
		return []string{uid}
	}
	for _, ref := range crr.OwnerReferences {
		if ref.Kind == "Pod" && ref.APIVersion == "v1" {
			return []string{string(ref.UID)}
		}
	}
	return nil
}
