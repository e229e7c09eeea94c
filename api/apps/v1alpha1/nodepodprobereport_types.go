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

// ProbeState is the last result the node daemon reported for a probe.
// +kubebuilder:validation:Enum=Succeeded;Failed;Unknown;NotProbed
type ProbeState string

const (
	// ProbeSucceeded means the probe reached its success threshold on the current container.
	ProbeSucceeded ProbeState = "Succeeded"
	// ProbeFailed means the probe reached its failure threshold on the container named by containerID.
	ProbeFailed ProbeState = "Failed"
	// ProbeUnknown means no result yet (initial delay, container not running, or probe errors).
	ProbeUnknown ProbeState = "Unknown"
	// ProbeNotProbed means the daemon does not run the probe (its message says why: the trust
	// gate refused the pod's seal, the pod is not found, ...). The enrolled container has no
	// liveness: the kubelet's probe was moved to the operator. It is never read as passing nor as
	// failed.
	ProbeNotProbed ProbeState = "NotProbed"
)

// ProbeResults are the probe results one node's daemon reports: the status of its
// NodePodProbeReport.
type ProbeResults struct {
	// observedGeneration is the NodePodProbe spec generation the daemon last acted on.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Observed Generation",xDescriptors={"urn:alm:descriptor:text"}
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// probedGeneration is the NodePodProbe spec generation (its metadata.generation) these
	// results are complete for: every probe of that spec that podProbeStatuses does not list has
	// passed its last probe (Succeeded, no run of failures). The daemon lists only probes that are
	// failing, suspect, not probed yet (state Unknown) or held back by its trust gate (state
	// NotProbed, always listed), so a write costs what is wrong on the node, not what is there. It sets it on every write; unset (the daemon has not written yet),
	// or older than the NodePodProbe's generation (its spec changed since), a probe missing from
	// podProbeStatuses may not have been probed yet.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Probed Generation",xDescriptors={"urn:alm:descriptor:text"}
	ProbedGeneration int64 `json:"probedGeneration,omitempty"`

	// probedPods is the number of pods of the spec with a result for at least one probe (those
	// that pass included, though podProbeStatuses does not list them).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Probed Pods",xDescriptors={"urn:alm:descriptor:text"}
	ProbedPods int32 `json:"probedPods,omitempty"`

	// failingProbes is the number of probe states that are Failed.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Failing Probes",xDescriptors={"urn:alm:descriptor:text"}
	FailingProbes int32 `json:"failingProbes,omitempty"`

	// omittedNamespaces are the namespaces whose pods' results the daemon cut to keep this
	// report within its byte budget, those whose results take more than their fair share of
	// it: podProbeStatuses lists only their Failed states that fit the share, which the manager
	// reads as failures; it reads every other probe of their pods on this node as not probed,
	// never as passing. A namespace within its share keeps every result, whatever another reports.
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=63
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Omitted Namespaces"
	OmittedNamespaces []string `json:"omittedNamespaces,omitempty"`

	// podProbeStatuses holds the probe results per pod, one entry per pod UID: only the probes
	// that are not passing, and the pods the daemon probes none of (notProbed).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Probe States"
	PodProbeStatuses []PodProbeStatus `json:"podProbeStatuses,omitempty"`
}

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

	// notProbed is set when the daemon runs none of the pod's probes and cannot name them: it
	// has no pod with this UID (yet), or the pod's probe context does not decode. It says why, in
	// short: the cause, a colon and the reason (e.g. "pod-not-found: ..."); probeStates is then
	// empty. The manager reads every probe of the pod as not probed, never as passing nor as failed.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	NotProbed string `json:"notProbed,omitempty"`
}

// ContainerProbeState is the result of one probe.
type ContainerProbeState struct {
	// name of the probe (matches the NodePodProbe's spec.podProbes[].probes[].name).
	// +required
	Name string `json:"name"`

	// containerID of the container the result was taken on ("<runtime>://<id>").
	// A result whose containerID is not the running container's is stale and never acted on.
	// +optional
	ContainerID string `json:"containerID,omitempty"`

	// state is Succeeded (the probe reached its success threshold on this container), Failed
	// (it reached its failure threshold; the decision controller decides whether to restart),
	// Unknown (no result yet: initial delay, container not running, startup probe not passed, or
	// probe errors) or NotProbed (the daemon does not run the probe; message says why). A
	// NotProbed container is counted as not probed, never as passing or failed.
	// +required
	State ProbeState `json:"state"`

	// message is a short reason for the state (an exit code, an HTTP status code, a timeout, a
	// connection error). The daemon writes at most 256 bytes; the API allows 1 KiB. It never holds the probe's output (command output,
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

// NodePodProbeReportSpec is empty: what the daemon probes is its NodePodProbe's spec. (The
// OLM bundle tooling needs a spec type for every owned kind.)
type NodePodProbeReportSpec struct{}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=nppr
// +kubebuilder:printcolumn:name="Probed",type=integer,JSONPath=`.status.probedGeneration`,description="NodePodProbe generation the results are complete for"
// +kubebuilder:printcolumn:name="Pods",type=integer,JSONPath=`.status.probedPods`,description="Pods of the spec with a result for at least one probe"
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
