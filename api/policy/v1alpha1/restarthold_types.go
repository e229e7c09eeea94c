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

// RestartHoldSpec is empty: a RestartHold is a record the manager keeps, nobody asks anything
// of it. (The OLM bundle tooling needs a spec type for every owned kind.)
type RestartHoldSpec struct{}

// RestartHoldStatus is one hold of a workload's container, as the decision controller keeps it.
// Times are on the API server's clock, as the manager measures it.
type RestartHoldStatus struct {
	// workload is the held workload: its top controller owner, or the pod itself when it has
	// none.
	// +required
	Workload WorkloadReference `json:"workload"`

	// container is the container (one liveness probe) of the workload's pods the hold is about:
	// storms, restarts that did not help and canaries are judged per container.
	// +kubebuilder:validation:MinLength=1
	// +required
	Container string `json:"container"`

	// reason the hold began for (a HoldReason, of these four only): FailureStorm, NodeStorm or
	// RestartIneffective (a doubt hold: a canary tests it), or MaxUnavailable (the budget is held
	// by unavailability the operator is not causing: it stops counting at nextCanary).
	// +kubebuilder:validation:Enum=FailureStorm;NodeStorm;RestartIneffective;MaxUnavailable
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Reason",xDescriptors={"urn:alm:descriptor:text"}
	Reason string `json:"reason"`

	// onset is when the hold began.
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Onset",xDescriptors={"urn:alm:descriptor:timestamp"}
	Onset metav1.Time `json:"onset"`

	// waitStart is when the current wait for a canary began (the onset, or the failure of the
	// last canary).
	// +required
	WaitStart metav1.Time `json:"waitStart"`

	// wait is how long the current wait lasts; unset when no canary ever goes (maxHold 0s). It
	// doubles after each canary that fails, up to maxHold.
	// +kubebuilder:validation:Type=string
	// +optional
	Wait *metav1.Duration `json:"wait,omitempty"`

	// nextCanary is when the next held pod is restarted as a canary (waitStart + wait); for a
	// MaxUnavailable hold, when the unavailability the operator is not causing stops counting
	// (maxHold after the onset). Unset while a canary is in flight, while the held pods are
	// released, and when none ever goes.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Next Canary",xDescriptors={"urn:alm:descriptor:timestamp"}
	NextCanary *metav1.Time `json:"nextCanary,omitempty"`

	// canaries counts the canaries restarted since the onset.
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Canaries",xDescriptors={"urn:alm:descriptor:text"}
	Canaries int32 `json:"canaries,omitempty"`

	// canary is the restart in flight that tests the hold: the others wait for its verdict.
	// +optional
	Canary *HoldCanary `json:"canary,omitempty"`

	// releasedAt is when a canary passed its probe: once it has not failed again for the time that
	// judges a restart, and for maxHold from then, the held pods go on to the budget, past the
	// rate limit.
	// +optional
	ReleasedAt *metav1.Time `json:"releasedAt,omitempty"`
}

// HoldCanary is the restart released to test a hold: a pod of the hold's workload.
type HoldCanary struct {
	// pod is the canary pod's name, in the hold's namespace.
	// +kubebuilder:validation:MinLength=1
	// +required
	Pod string `json:"pod"`

	// podUID is the canary pod's UID.
	// +required
	PodUID types.UID `json:"podUID"`

	// container is the restarted container.
	// +kubebuilder:validation:MinLength=1
	// +required
	Container string `json:"container"`

	// containerID is the instance the restart stopped.
	// +kubebuilder:validation:MinLength=1
	// +required
	ContainerID string `json:"containerID"`

	// restartedAt is when the restart was decided.
	// +required
	RestartedAt metav1.Time `json:"restartedAt"`

	// deadline is when, without its new container passing its probe, the canary counts as
	// failed.
	// +required
	Deadline metav1.Time `json:"deadline"`

	// evicted: the canary pod was evicted (restartEffectiveness.action Evict) at restartedAt
	// instead of restarted; it counts as lost once it is gone, and the next canary may go.
	// +optional
	Evicted bool `json:"evicted,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=rhold
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.status.workload.name`
// +kubebuilder:printcolumn:name="Container",type=string,JSONPath=`.status.container`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Onset",type=date,JSONPath=`.status.onset`,description="When the hold began"
// +kubebuilder:printcolumn:name="Next Canary",type=string,JSONPath=`.status.nextCanary`,description="When the next held pod is restarted as a canary"
// +kubebuilder:printcolumn:name="Canaries",type=integer,JSONPath=`.status.canaries`,description="Canaries restarted so far"
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.status.workload.kind`,priority=1

// RestartHold is the record of one hold of a workload's container: when it began, how long the
// current wait for a canary lasts, the canary in flight. The decision controller writes it, once
// per change of the hold, and only it may (an admission policy refuses everyone else), so that
// a hold goes on where it was across manager restarts and leader changes; it is deleted when the
// hold ends, and with its workload. Read it with kubectl get restartholds.
// +operator-sdk:csv:customresourcedefinitions:displayName="Restart Hold",resources={{Pod,v1,pods},{ContainerRecreateRequest,v1alpha1,containerrecreaterequests}}
type RestartHold struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is empty.
	// +optional
	Spec RestartHoldSpec `json:"spec,omitzero"`

	// status is the hold, written by the decision controller with the object.
	// +optional
	Status RestartHoldStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// RestartHoldList contains a list of RestartHold
type RestartHoldList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []RestartHold `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &RestartHold{}, &RestartHoldList{})
		return nil
	})
}
