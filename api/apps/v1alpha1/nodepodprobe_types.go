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

// NodePodProbeStatus is written by the manager. The node daemon's results are in the
// NodePodProbeReport of the same name.
type NodePodProbeStatus struct {
	// conditions: Mapped is False while the API server refuses the spec the manager computed for
	// the node, whose enrolled pods are then not probed as they should be (each gets a Warning
	// event). A NodePodProbe whose spec was never refused has none.
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

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=npp
// +kubebuilder:printcolumn:name="Generation",type=integer,JSONPath=`.metadata.generation`,description="Spec generation: the NodePodProbeReport's Probed column reaches it once the daemon has probed this spec"
// +kubebuilder:printcolumn:name="Mapped",type=string,JSONPath=`.status.conditions[?(@.type=="Mapped")].status`,description="False while the API server refuses the spec the manager computed; empty when it never refused one"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NodePodProbe lists the liveness probes of the enrolled pods on one node (its name is the
// node's name). The node's daemon reports their results in the NodePodProbeReport of the same
// name, which this object owns.
// +operator-sdk:csv:customresourcedefinitions:displayName="Node Pod Probe",resources={{Pod,v1,pods}}
type NodePodProbe struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec lists the probes to run, written by the manager.
	// +optional
	Spec NodePodProbeSpec `json:"spec,omitzero"`

	// status holds the manager's conditions.
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
