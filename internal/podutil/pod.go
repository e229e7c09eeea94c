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

// Package podutil answers the questions about a pod that the webhooks, the controllers and the
// node daemon all ask, the way the kubelet answers them: which containers the kubelet restarts in
// place, a container's status, its running instance, a port by name, and readiness; and the API
// server's defaults of a probe, which the webhook and the daemon both fill in.
package podutil

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RestartableContainer is a container the kubelet starts again after it stops: a regular
// container or a restartable init container (a sidecar, restartPolicy: Always). Only these may
// carry a liveness probe.
type RestartableContainer struct {
	Container *corev1.Container
	// Path is the container's entry in the pod, for field errors.
	Path *field.Path
	// Sidecar is true for a restartable init container.
	Sidecar bool
}

// RestartableContainers lists the sidecars and then the regular containers of spec, in spec
// order, pointing into spec so that callers may edit them.
func RestartableContainers(spec *corev1.PodSpec) []RestartableContainer {
	out := make([]RestartableContainer, 0, len(spec.Containers)+len(spec.InitContainers))
	for i := range spec.InitContainers {
		if c := &spec.InitContainers[i]; IsSidecar(c) {
			out = append(out, RestartableContainer{c, field.NewPath("spec", "initContainers").Index(i), true})
		}
	}
	for i := range spec.Containers {
		out = append(out, RestartableContainer{&spec.Containers[i], field.NewPath("spec", "containers").Index(i), false})
	}
	return out
}

// FindRestartable returns the restartable container called name. It looks in the order of
// RestartableContainers without building the list: the probe workers call it on every run.
func FindRestartable(spec *corev1.PodSpec, name string) (RestartableContainer, bool) {
	for i := range spec.InitContainers {
		if c := &spec.InitContainers[i]; c.Name == name && IsSidecar(c) {
			return RestartableContainer{c, field.NewPath("spec", "initContainers").Index(i), true}, true
		}
	}
	for i := range spec.Containers {
		if c := &spec.Containers[i]; c.Name == name {
			return RestartableContainer{c, field.NewPath("spec", "containers").Index(i), false}, true
		}
	}
	return RestartableContainer{}, false
}

// IsSidecar reports whether an init container is restartable (restartPolicy: Always).
func IsSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// EffectiveRestartPolicy is the restart policy the kubelet applies to a regular container: its
// own restartPolicy when set (ContainerRestartRules, beta and on by default since Kubernetes
// 1.35), else the pod's (Always when unset, as the apiserver defaults it).
func EffectiveRestartPolicy(spec *corev1.PodSpec, c *corev1.Container) corev1.RestartPolicy {
	if c.RestartPolicy != nil {
		return corev1.RestartPolicy(*c.RestartPolicy)
	}
	if spec.RestartPolicy == "" {
		return corev1.RestartPolicyAlways
	}
	return spec.RestartPolicy
}

// RestartedAfterStop reports whether the kubelet starts rc again after a CRI stop, whatever the
// exit code the application returns on SIGTERM: only then can the operator restart it the way
// the kubelet's own liveness kill does. Sidecars always are; a regular container is when its
// effective restart policy is Always (under OnFailure an exit 0 after the stop ends it for good,
// under Never any exit does).
func RestartedAfterStop(spec *corev1.PodSpec, rc RestartableContainer) bool {
	return RestartPolicyAfterStop(spec, rc) == corev1.RestartPolicyAlways
}

// RestartPolicyAfterStop is the restart policy the kubelet applies to rc once it has stopped:
// Always for a sidecar, whatever the pod's, else EffectiveRestartPolicy. Enrollment, the CRR
// webhook and the node daemon's executor all judge a container by it.
func RestartPolicyAfterStop(spec *corev1.PodSpec, rc RestartableContainer) corev1.RestartPolicy {
	if rc.Sidecar {
		return corev1.RestartPolicyAlways
	}
	return EffectiveRestartPolicy(spec, rc.Container)
}

// IsInitContainer reports whether the pod has an init container (of any kind) called name.
func IsInitContainer(spec *corev1.PodSpec, name string) bool {
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == name {
			return true
		}
	}
	return false
}

// ContainerStatus returns the status of the container called name, regular or init (sidecars
// are listed among the init container statuses), or nil.
func ContainerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// RunningContainerID returns the ID of the named container's instance if it is running, else
// "", and its restart count.
func RunningContainerID(pod *corev1.Pod, name string) (string, int32) {
	cs := ContainerStatus(pod, name)
	switch {
	case cs == nil:
		return "", 0
	case cs.State.Running == nil:
		return "", cs.RestartCount
	default:
		return cs.ContainerID, cs.RestartCount
	}
}

// IsFinished reports whether the pod has run to completion (phase Succeeded or Failed): its
// containers will not run again, so it counts in no budget.
func IsFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// IsReady reports whether the pod's Ready condition is True.
func IsReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// NamedPort returns the number of the container port called name.
func NamedPort(c *corev1.Container, name string) (int32, bool) {
	if c == nil {
		return 0, false
	}
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort, true
		}
	}
	return 0, false
}

// ResolvePort turns the port of an httpGet or tcpSocket action (a probe or a lifecycle hook) into
// a number, looking a named port up in the container's ports, with the kubelet's messages.
func ResolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	var port int
	switch p.Type {
	case intstr.Int:
		port = p.IntValue()
	case intstr.String:
		n, ok := NamedPort(c, p.StrVal)
		if !ok {
			return -1, fmt.Errorf("port %q not found", p.StrVal)
		}
		port = int(n)
	default:
		return -1, fmt.Errorf("port has no type: %+v", p)
	}
	if port < 1 || port > 65535 {
		return port, fmt.Errorf("invalid port number: %d", port)
	}
	return port, nil
}
