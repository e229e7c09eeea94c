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

package facts

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// Elsewhere returns the pod's node and counts the pods of its workload on other nodes whose probe
// of container passes, as their nodes' daemons report it now: a failure that the same app does
// not have elsewhere is the node's (the node condition). A daemon that is not reporting vouches
// for nothing. A pod that is gone, or not scheduled, has no node and counts nothing.
func (r *Reader) Elsewhere(ctx context.Context, key types.NamespacedName, container string) (node string, passing int, err error) {
	pod := &corev1.Pod{}
	if err := r.cache.Get(ctx, key, pod, unsafeGet); err != nil || pod.Spec.NodeName == "" {
		if err == nil || apierrors.IsNotFound(err) {
			return "", 0, nil
		}
		return "", 0, err
	}
	n, err := r.passingElsewhere(ctx, pod, container)
	return pod.Spec.NodeName, n, err
}

func (r *Reader) passingElsewhere(ctx context.Context, pod *corev1.Pod, container string) (int, error) {
	w, err := r.workloads.Resolve(ctx, pod)
	if err != nil {
		return 0, err
	}
	pods, err := r.workloads.Pods(ctx, pod, w)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName == pod.Spec.NodeName || p.DeletionTimestamp != nil {
			continue
		}
		if d, err := r.daemon(ctx, p.Spec.NodeName); err != nil {
			return 0, err
		} else if !d.Reporting {
			continue
		}
		states, err := r.containerStates(ctx, p)
		if err != nil {
			return 0, err
		}
		for _, c := range states {
			if c.Name == container && c.Healthy {
				n++
			}
		}
	}
	return n, nil
}
