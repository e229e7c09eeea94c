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
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/index"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

// ownerLookup reads the controllers the workload resolution can follow: apps/v1 ReplicaSet,
// Deployment and StatefulSet. Other kinds end the walk and their pods are counted to get the
// desired replicas; that includes DaemonSets, which the manager caches only in its own namespace
// (its daemon). A reference whose UID no longer matches is treated as gone.
func (v *view) ownerLookup(ctx context.Context, ns string) protection.OwnerLookup {
	return func(ref metav1.OwnerReference) (*protection.Owner, error) {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != appsv1.GroupName {
			return nil, nil
		}
		var obj client.Object
		switch ref.Kind {
		case "ReplicaSet":
			obj = &appsv1.ReplicaSet{}
		case "Deployment":
			obj = &appsv1.Deployment{}
		case "StatefulSet":
			obj = &appsv1.StatefulSet{}
		default:
			return nil, nil
		}
		if err := v.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj, unsafeGet); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		if ref.UID != "" && obj.GetUID() != ref.UID {
			return nil, nil
		}
		o := &protection.Owner{Controller: metav1.GetControllerOf(obj)}
		switch t := obj.(type) {
		case *appsv1.ReplicaSet:
			o.Replicas = replicasOrOne(t.Spec.Replicas)
		case *appsv1.Deployment:
			o.Replicas = replicasOrOne(t.Spec.Replicas)
		case *appsv1.StatefulSet:
			o.Replicas = replicasOrOne(t.Spec.Replicas)
		}
		return o, nil
	}
}

// replicasOrOne applies the API default of spec.replicas.
func replicasOrOne(r *int32) *int32 {
	if r == nil {
		return ptr.To[int32](1)
	}
	return r
}

// resolve finds the pod's workload (and, in the decision controller, remembers it for event fan-out).
func (v *view) resolve(ctx context.Context, pod *corev1.Pod) (protection.Workload, error) {
	w, err := protection.ResolveWorkload(pod, v.ownerLookup(ctx, pod.Namespace))
	if err != nil {
		return w, err
	}
	var owner types.UID
	if ref := metav1.GetControllerOf(pod); ref != nil {
		owner = ref.UID
	}
	if v.resolved != nil {
		v.resolved(pod.UID, owner, w.Ref.Key(pod.Namespace))
	}
	return w, nil
}

// workloadPods lists the cached (enrolled) pods of a workload: pods it controls directly, and
// pods of the ReplicaSets it controls.
func (v *view) workloadPods(ctx context.Context, pod *corev1.Pod, w protection.Workload) ([]*corev1.Pod, error) {
	if w.Ref.Kind == "Pod" && w.Ref.APIVersion == "v1" {
		return []*corev1.Pod{pod}, nil
	}
	owners := []types.UID{w.Ref.UID}
	rsList := &appsv1.ReplicaSetList{}
	if err := v.c.List(ctx, rsList, client.InNamespace(pod.Namespace),
		client.MatchingFields{index.ByController: string(w.Ref.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range rsList.Items {
		owners = append(owners, rsList.Items[i].UID)
	}
	var out []*corev1.Pod
	for _, uid := range owners {
		list := &corev1.PodList{}
		if err := v.c.List(ctx, list, client.InNamespace(pod.Namespace),
			client.MatchingFields{index.ByController: string(uid)}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}
