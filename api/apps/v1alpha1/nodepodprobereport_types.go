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
)

// NodePodProbeReportSpec is empty: what the daemon probes is its NodePodProbe's spec. (The
// OLM bundle tooling needs a spec type for every owned kind.)
type NodePodProbeReportSpec struct{}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=nppr
// +kubebuilder:printcolumn:name="Probed",type=integer,JSONPath=`.status.probedGeneration`,description="NodePodProbe generation the results are complete for"
// +kubebuilder:printcolumn:name="Pods",type=integer,JSONPath=`.status.probedPods`,description="Pods with reported probe states"
// +kubebuilder:printcolumn:name="Failing",type=integer,JSONPath=`.status.failingProbes`,description="Probes whose last state is Failed"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NodePodProbeReport holds, in status, the probe results of one node's daemon for the
// NodePodProbe of the same name (the node's name), which owns it. It has no spec: results live
// apart from the spec so that a status write costs the API server what is wrong on the node,
// not the size of the node's probe list. The manager creates it; only the node's daemon writes
// its status.
// +operator-sdk:csv:customresourcedefinitions:displayName="Node Pod Probe Report",resources={{NodePodProbe,v1alpha1,nodepodprobes}}
type NodePodProbeReport struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is empty.
	// +optional
	Spec NodePodProbeReportSpec `json:"spec,omitzero"`

	// status holds the results, written by the node daemon.
	// +optional
	Status ProbeResults `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// NodePodProbeReportList contains a list of NodePodProbeReport
type NodePodProbeReportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []NodePodProbeReport `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &NodePodProbeReport{}, &NodePodProbeReportList{})
		return nil
	})
}
