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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// NodePodProbeSpec names the enrolled pods whose liveness probes the node daemon must run on one
// node. It is written by the manager's probe-mapping controller; people should not edit it.
//
// It names pods only: the daemon reads each pod's probes from the pod itself, from the probe
// context the pod webhook admitted and the manager sealed for that pod (the containers the
// operator probes, named ports resolved, the pod IP from its status). So an entry's size does not
// grow with what a pod enrolls, and no namespace can fill the object (docs/performance.md).
type NodePodProbeSpec struct {
	// Every list of a NodePodProbe is atomic: each has one writer that writes it whole from a map
	// (unique by construction), and per-entry field ownership made managedFields half the object,
	// which the API server re-processes on every status write of the node (docs/development.md).

	// podProbes holds one entry per enrolled pod bound to this node, one per pod UID. When the
	// node has more enrolled pods than it holds, pods of the namespace with the most entries on
	// the node are left out (condition Mapped).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod Probes"
	PodProbes []PodProbe `json:"podProbes,omitempty"`
}

// PodProbe names one enrolled pod whose liveness probes the node daemon runs. Its probes are
// those of the pod's sealed probe context, one per container the operator probes, named
// "<pod>-<container>".
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
}

// NodePodProbeStatus is written by the manager. The node daemon's results are in the
// NodePodProbeReport of the same name.
type NodePodProbeStatus struct {
	// conditions: Mapped is False while the API server refuses the spec the manager computed for
	// the node, whose enrolled pods are then not probed as they should be (each gets a Warning
	// event), and while the node has more enrolled pods than spec.podProbes holds (reason
	// PodsLeftOut: the message names the namespace whose pods were left out and how many). A
	// NodePodProbe whose spec was never refused nor cut has none.
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
	// ReasonPodsLeftOut: the node has more enrolled pods than a NodePodProbe holds; pods of the
	// namespace with the most entries on the node were left out (the message says which and how
	// many), each with a LivenessProbeNotMapped Warning event.
	ReasonPodsLeftOut = "PodsLeftOut"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=npp
// +kubebuilder:printcolumn:name="Generation",type=integer,JSONPath=`.metadata.generation`,description="Spec generation: the NodePodProbeReport's Probed column reaches it once the daemon has probed this spec"
// +kubebuilder:printcolumn:name="Mapped",type=string,JSONPath=`.status.conditions[?(@.type=="Mapped")].status`,description="False while the API server refuses the spec the manager computed or pods were left out; empty when neither happened"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NodePodProbe names the enrolled pods whose liveness probes run on one node (its name is the
// node's name). The node's daemon reports their results in the NodePodProbeReport of the same
// name, which this object owns.
// +operator-sdk:csv:customresourcedefinitions:displayName="Node Pod Probe",resources={{Pod,v1,pods}}
type NodePodProbe struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec names the pods to probe, written by the manager.
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
