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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// NodePodProbeSpec lists the liveness probes the node daemon must run on one node.
// It is written by the manager's probe-mapping controller; people should not edit it.
type NodePodProbeSpec struct {
	// Every list of a NodePodProbe is atomic: each has one writer that writes it whole from a map
	// (unique by construction), and per-entry field ownership made managedFields half the object,
	// which the API server re-processes on every status write of the node (docs/development.md).

	// podProbes holds one entry per enrolled pod bound to this node, one per pod UID.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod Probes"
	PodProbes []PodProbe `json:"podProbes,omitempty"`
}

// PodProbe is the set of liveness probes of one pod.
type PodProbe struct {
	// name of the pod.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// namespace of the pod.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Namespace string `json:"namespace"`

	// uid of the pod. A pod recreated under the same name has a new UID and a new entry.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	// +required
	UID types.UID `json:"uid"`

	// ip is the pod IP that HTTP, TCP and gRPC probes dial when the probe names no host.
	// +optional
	IP string `json:"ip,omitempty"`

	// probes holds one liveness probe per container, one per probe name.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +required
	Probes []ContainerProbe `json:"probes"`
}

// ContainerProbe is one liveness probe of one container.
type ContainerProbe struct {
	// name identifies the probe within the pod; it is stable for the life of the pod
	// (by convention "<pod>-<container>").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	Name string `json:"name"`

	// containerName is the container the probe checks.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	ContainerName string `json:"containerName"`

	// probe is the container's original livenessProbe, with named ports resolved to numbers.
	// It has exactly one handler: exec, httpGet, tcpSocket or grpc.
	// +kubebuilder:validation:XValidation:rule="[has(self.exec), has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",message="probe must have exactly one handler: exec, httpGet, tcpSocket or grpc"
	// +required
	Probe corev1.Probe `json:"probe"`
}

// ProbeState is the last result the node daemon reported for a probe.
// +kubebuilder:validation:Enum=Succeeded;Failed;Unknown
type ProbeState string

const (
	// ProbeSucceeded means the probe reached its success threshold on the current container.
	ProbeSucceeded ProbeState = "Succeeded"
	// ProbeFailed means the probe reached its failure threshold on the container named by containerID.
	ProbeFailed ProbeState = "Failed"
	// ProbeUnknown means no result yet (initial delay, container not running, or probe errors).
	ProbeUnknown ProbeState = "Unknown"
)

// ProbeResults are the probe results one node's daemon reports: the status of its
// NodePodProbeReport (and, from daemons older than the report, of its NodePodProbe).
type ProbeResults struct {
	// observedGeneration is the NodePodProbe spec generation the daemon last acted on.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Observed Generation",xDescriptors={"urn:alm:descriptor:text"}
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// probedGeneration is the NodePodProbe spec generation (its metadata.generation) these
	// results are complete for: every probe of that spec that podProbeStatuses does not list has
	// passed its last probe (Succeeded, no run of failures). A daemon that sets it lists only
	// probes that are failing, suspect or not probed yet (state Unknown), so a write costs what is
	// wrong on the node, not what is there. Unset, or older than the NodePodProbe's generation, a
	// probe missing from podProbeStatuses may not have been probed yet (the only reading of a
	// status written by a daemon before this field existed).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Probed Generation",xDescriptors={"urn:alm:descriptor:text"}
	ProbedGeneration int64 `json:"probedGeneration,omitempty"`

	// probedPods is the number of pods of the spec with a result for at least one probe (those
	// that pass included, though a status with probedGeneration does not list them).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Probed Pods",xDescriptors={"urn:alm:descriptor:text"}
	ProbedPods int32 `json:"probedPods,omitempty"`

	// failingProbes is the number of probe states that are Failed.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Failing Probes",xDescriptors={"urn:alm:descriptor:text"}
	FailingProbes int32 `json:"failingProbes,omitempty"`

	// podProbeStatuses holds the probe results per pod, one entry per pod UID: with
	// probedGeneration set, only the probes that are not passing.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Probe States"
	PodProbeStatuses []PodProbeStatus `json:"podProbeStatuses,omitempty"`
}

// NodePodProbeStatus is written by the node daemon.
type NodePodProbeStatus struct {
	// The probe results: a daemon that writes a NodePodProbeReport leaves them empty here (it
	// clears what an older daemon wrote); the manager reads them only when the node has no report
	// with probedGeneration set, i.e. while an older daemon runs on the node.
	ProbeResults `json:",inline"`

	// conditions are written by the manager (the daemon keeps them as they are): Mapped is False
	// while the API server refuses the spec the manager computed for the node, whose enrolled pods
	// are then not probed as they should be (each gets a Warning event).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionMapped is the NodePodProbe condition that says whether the spec holds every enrolled
// pod of the node the manager could map: False while the API server refuses the write.
const ConditionMapped = "Mapped"

// The reasons of ConditionMapped.
const (
	// ReasonSpecWritten: the spec the manager computed was written.
	ReasonSpecWritten = "SpecWritten"
	// ReasonWriteRefused: the API server refused the spec; the message has its error.
	ReasonWriteRefused = "WriteRefused"
)

// PodProbeStatus holds the probe results of one pod.
type PodProbeStatus struct {
	// name of the pod.
	// +required
	Name string `json:"name"`

	// namespace of the pod.
	// +required
	Namespace string `json:"namespace"`

	// uid of the pod the results were taken on.
	// +required
	UID types.UID `json:"uid"`

	// probeStates holds one result per probe, one per probe name.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ProbeStates []ContainerProbeState `json:"probeStates,omitempty"`
}

// ContainerProbeState is the result of one probe.
type ContainerProbeState struct {
	// name of the probe (matches spec.podProbes[].probes[].name).
	// +required
	Name string `json:"name"`

	// containerID of the container the result was taken on ("<runtime>://<id>").
	// A result whose containerID is not the running container's is stale and never acted on.
	// +optional
	ContainerID string `json:"containerID,omitempty"`

	// state is Succeeded (the probe reached its success threshold on this container), Failed
	// (it reached its failure threshold; the decision controller decides whether to restart) or
	// Unknown (no result yet: initial delay, container not running, startup probe not passed, or
	// probe errors).
	// +required
	State ProbeState `json:"state"`

	// message is a short reason for the state (an exit code, an HTTP status code, a timeout, a
	// connection error), capped at 1 KiB. It never holds the probe's output (command output,
	// response body): this object is cluster-scoped, so that goes only to the pod's events.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`

	// lastProbeTime is when the probe ran last before this state was written.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitzero"`

	// lastTransitionTime is when state last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitzero"`

	// failingSince is set while the probe fails on the current container: when its run of
	// failures began, from the run's second consecutive failure (its first with a
	// failureThreshold of 1), before it reaches failureThreshold (state is then not yet Failed)
	// and after. A single failed run between successes never sets it. It is written only when a
	// run of failures is marked or ends, so early storm evidence costs one write per container.
	// Unset while the probe passes.
	// +optional
	FailingSince *metav1.Time `json:"failingSince,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=npp
// +kubebuilder:printcolumn:name="Pods",type=integer,JSONPath=`.status.probedPods`,description="Pods with reported probe states"
// +kubebuilder:printcolumn:name="Failing",type=integer,JSONPath=`.status.failingProbes`,description="Probes whose last state is Failed"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NodePodProbe lists the liveness probes of the enrolled pods on one node (its name is the
// node's name) and, in status, their results as reported by that node's daemon.
// +operator-sdk:csv:customresourcedefinitions:displayName="Node Pod Probe",resources={{Pod,v1,pods}}
type NodePodProbe struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec lists the probes to run, written by the manager.
	// +optional
	Spec NodePodProbeSpec `json:"spec,omitzero"`

	// status holds the results, written by the node daemon.
	// +optional
	Status NodePodProbeStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// NodePodProbeList contains a list of NodePodProbe
type NodePodProbeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []NodePodProbe `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &NodePodProbe{}, &NodePodProbeList{})
		return nil
	})
}
