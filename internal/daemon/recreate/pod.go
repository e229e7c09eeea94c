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

package recreate

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// NextToRun picks, among the unfinished requests of one pod, the one allowed to run: one that is
// already Recreating (never two at once), else the oldest (by creation, then name).
func NextToRun(crrs []appsv1alpha1.ContainerRecreateRequest) *appsv1alpha1.ContainerRecreateRequest {
	var open []*appsv1alpha1.ContainerRecreateRequest
	for i := range crrs {
		if crrs[i].Active() {
			open = append(open, &crrs[i])
		}
	}
	if len(open) == 0 {
		return nil
	}
	slices.SortFunc(open, func(a, b *appsv1alpha1.ContainerRecreateRequest) int {
		ar, br := a.Status.Phase == appsv1alpha1.RecreateRecreating, b.Status.Phase == appsv1alpha1.RecreateRecreating
		if ar != br {
			if ar {
				return -1
			}
			return 1
		}
		if c := a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return open[0]
}

// ObservePod reads what pod status says about container name. RuntimeRunning is left for the
// caller, who asks the runtime.
func ObservePod(pod *corev1.Pod, name string) Observed {
	rc, ok := podutil.FindRestartable(&pod.Spec, name)
	if !ok {
		return Observed{}
	}
	sidecar := rc.Sidecar
	o := Observed{InSpec: true, RestartPolicy: pod.Spec.RestartPolicy}
	if o.RestartPolicy == "" {
		o.RestartPolicy = corev1.RestartPolicyAlways
	}
	statuses := pod.Status.ContainerStatuses
	if sidecar {
		o.RestartPolicy = corev1.RestartPolicyAlways
		statuses = pod.Status.InitContainerStatuses
	}
	for _, s := range statuses {
		if s.Name != name {
			continue
		}
		o.ContainerID = s.ContainerID
		if r := s.State.Running; r != nil {
			o.Running, o.StartedAt = true, r.StartedAt.Time
			// started is unset by kubelets that predate it; a running container then counts as started.
			o.Started = s.Started == nil || *s.Started
		}
		if t := s.State.Terminated; t != nil && t.ExitCode == 0 {
			o.ExitedZero = true
		}
	}
	return o
}
