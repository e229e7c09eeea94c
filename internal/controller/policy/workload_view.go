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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

// resolve finds the pod's workload (and, in the decision controller, remembers it for event fan-out).
func (v *view) resolve(ctx context.Context, pod *corev1.Pod) (protection.Workload, error) {
	w, err := protection.ResolveWorkload(pod, v.owners.lookup(ctx, pod.Namespace))
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
		client.MatchingFields{managercache.ByController: string(w.Ref.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range rsList.Items {
		owners = append(owners, rsList.Items[i].UID)
	}
	var out []*corev1.Pod
	for _, uid := range owners {
		list := &corev1.PodList{}
		if err := v.c.List(ctx, list, client.InNamespace(pod.Namespace),
			client.MatchingFields{managercache.ByController: string(uid)}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}
