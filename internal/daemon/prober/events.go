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
package prober

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// Event reasons, as the kubelet names them.
const (
	ReasonUnhealthy    = "Unhealthy"
	ReasonProbeWarning = "ProbeWarning"
	// ReasonPodIPMismatch: the pod's status.podIP is not the address the runtime gives its
	// sandbox; the probes dial the runtime's.
	ReasonPodIPMismatch = "PodIPMismatch"
	eventAction         = "Probing"
)

// Events sends the worker's events on the pod, pointing at the container as the kubelet's do.
type Events struct {
	Recorder events.EventRecorder
}

func (e *Events) warn(t *Target, pod *corev1.Pod, reason, format string, args ...any) {
	if e == nil || e.Recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{
		APIVersion: "v1", Kind: "Pod", Namespace: t.Namespace, Name: t.PodName, UID: t.PodUID,
		FieldPath: fieldPath(pod, t.Container),
	}
	// events.k8s.io caps a note at 1 KiB; probe output can be 10 KiB.
	e.Recorder.Eventf(ref, nil, corev1.EventTypeWarning, reason, eventAction, "%s", truncate.String(fmt.Sprintf(format, args...), truncate.MaxEventNoteBytes))
}

// fieldPath points an event at the container, as the kubelet's events do.
func fieldPath(pod *corev1.Pod, container string) string {
	if podutil.IsInitContainer(&pod.Spec, container) {
		return "spec.initContainers{" + container + "}"
	}
	return "spec.containers{" + container + "}"
}
