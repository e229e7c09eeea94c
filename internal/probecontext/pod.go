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

package probecontext

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ProbedContainer is a container that may carry a liveness probe: a regular container or a
// restartable init container (sidecar), with the path of its spec entry.
type ProbedContainer struct {
	Container *corev1.Container
	Path      *field.Path
}

// ProbedContainers lists the pod's restartable init containers (sidecars) and regular
// containers, in spec order, pointing into spec so that callers may edit them.
func ProbedContainers(spec *corev1.PodSpec) []ProbedContainer {
	out := make([]ProbedContainer, 0, len(spec.Containers)+len(spec.InitContainers))
	for i := range spec.InitContainers {
		if c := &spec.InitContainers[i]; IsSidecar(c) {
			out = append(out, ProbedContainer{c, field.NewPath("spec", "initContainers").Index(i)})
		}
	}
	for i := range spec.Containers {
		out = append(out, ProbedContainer{&spec.Containers[i], field.NewPath("spec", "containers").Index(i)})
	}
	return out
}

// FindProbedContainer returns the probed container called name, if any.
func FindProbedContainer(spec *corev1.PodSpec, name string) (ProbedContainer, bool) {
	for _, pc := range ProbedContainers(spec) {
		if pc.Container.Name == name {
			return pc, true
		}
	}
	return ProbedContainer{}, false
}

// IsSidecar reports whether an init container is restartable (restartPolicy: Always).
func IsSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
