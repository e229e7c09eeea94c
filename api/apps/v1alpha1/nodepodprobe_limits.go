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

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The limits of the NodePodProbe schema. The kubebuilder markers on the types need literals, so
// they repeat these numbers; a unit test reads the generated CRD and fails when the two differ.
// The pod webhook and the probe-mapping controller check an entry against these before it is
// written, so that the API server never refuses a NodePodProbe for one pod's sake.
const (
	// MaxPodProbesPerNode is the most pods spec.podProbes (and the NodePodProbeReport's
	// status.podProbeStatuses) holds.
	MaxPodProbesPerNode = 1000
	// MaxPodNameLength is the longest pod name (the API server's own limit).
	MaxPodNameLength = 253
	// MaxNamespaceLength is the longest namespace name (a DNS label).
	MaxNamespaceLength = 63
	// MaxProbesPerPod is the most probes (containers with a liveness probe) one pod may enroll.
	MaxProbesPerPod = 64
	// MaxContainerNameLength is the longest container name (a DNS label).
	MaxContainerNameLength = 63
	// MaxProbeNameLength is the longest probe name ("<pod>-<container>"): as long as the longest
	// pod and container names the API server accepts make it, so that no pod is refused for it.
	MaxProbeNameLength = MaxPodNameLength + len("-") + MaxContainerNameLength
	// MaxProbeMessageLength is the longest status message of a probe state the API accepts.
	MaxProbeMessageLength = 1024
	// ReportMessageLength is the longest message the daemon writes into a probe state: the
	// reason (exit code, HTTP status, error class) fits, and a node's report stays small.
	ReportMessageLength = 256
	// MaxPodNotProbedLength is the longest notProbed reason of a pod in the report.
	MaxPodNotProbedLength = 256
)

// ValidatePodProbe checks one spec.podProbes entry against every rule of the NodePodProbe schema,
// so that an entry the API server would refuse is found before the write. path is the entry's.
func ValidatePodProbe(pp *PodProbe, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateLength(path.Child("name"), pp.Name, MaxPodNameLength)...)
	errs = append(errs, validateLength(path.Child("namespace"), pp.Namespace, MaxNamespaceLength)...)
	if pp.UID == "" {
		errs = append(errs, field.Required(path.Child("uid"), ""))
	}
	return errs
}

// validateLength applies a minLength 1 / maxLength marker pair.
func validateLength(path *field.Path, value string, maxLen int) field.ErrorList {
	switch {
	case value == "":
		return field.ErrorList{field.Required(path, "")}
	case len(value) > maxLen:
		return field.ErrorList{field.TooLong(path, "", maxLen)}
	}
	return nil
}
