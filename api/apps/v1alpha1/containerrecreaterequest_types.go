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

// ContainerRecreateRequestSpec says which containers of a pod to restart, and how.
// It cannot be changed after creation.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable after creation"
type ContainerRecreateRequestSpec struct {
	// podName is the pod, in the request's namespace, whose containers are restarted.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod",xDescriptors={"urn:alm:descriptor:io.kubernetes:Pod"}
	PodName string `json:"podName"`

	// containers to restart, in order. Each name appears once.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Containers"
	Containers []ContainerRecreateRequestContainer `json:"containers"`

	// strategy controls how the containers are stopped.
	// +kubebuilder:default={}
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Strategy"
	Strategy ContainerRecreateRequestStrategy `json:"strategy,omitzero"`

	// activeDeadlineSeconds bounds the whole request, from creation; when it passes the manager
	// fails the request. Defaulted by the webhook to max(600, terminationGracePeriodSeconds +
	// minStartedSeconds + 180), so that a long grace period never outlives the request.
	// +kubebuilder:validation:Minimum=3
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Active Deadline Seconds",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// ttlSecondsAfterFinished deletes the request this long after it finished. Defaulted to 300 by
	// the webhook.
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="TTL Seconds After Finished",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ContainerRecreateRequestContainer names one container to restart.
type ContainerRecreateRequestContainer struct {
	// name of the container (a regular container or a restartable init container).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// statusContext is the container as it was when the request was created; filled in by the
	// webhook. A container whose containerID has already changed counts as restarted.
	// +optional
	StatusContext *ContainerRecreateRequestContainerContext `json:"statusContext,omitempty"`
}

// ContainerRecreateRequestContainerContext identifies the container instance to restart.
type ContainerRecreateRequestContainerContext struct {
	// containerID of the running container ("<runtime>://<id>").
	// +kubebuilder:validation:MinLength=1
	// +required
	ContainerID string `json:"containerID"`

	// restartCount of the container when the request was created.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RestartCount int32 `json:"restartCount"`
}

// ContainerRecreateRequestFailurePolicy says what a failed stop of one container does.
// +kubebuilder:validation:Enum=Fail;Ignore
type ContainerRecreateRequestFailurePolicy string

const (
	// FailurePolicyFail fails the whole request when one container cannot be stopped.
	FailurePolicyFail ContainerRecreateRequestFailurePolicy = "Fail"
	// FailurePolicyIgnore records the failure and carries on with the other containers.
	FailurePolicyIgnore ContainerRecreateRequestFailurePolicy = "Ignore"
)

// ContainerRecreateRequestStrategy controls how containers are stopped.
type ContainerRecreateRequestStrategy struct {
	// failurePolicy says what a failed stop of one container does: Fail (the default) fails the
	// whole request; Ignore records the failure in that container's state and goes on with the
	// other containers.
	// +kubebuilder:default=Fail
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Failure Policy",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Fail","urn:alm:descriptor:com.tectonic.ui:select:Ignore"}
	FailurePolicy ContainerRecreateRequestFailurePolicy `json:"failurePolicy,omitempty"`

	// orderedRecreate restarts the next container only after the previous one runs again.
	// +optional
	OrderedRecreate bool `json:"orderedRecreate,omitempty"`

	// forceRecreate stops the container even when it has already restarted since the request was made.
	// +optional
	ForceRecreate bool `json:"forceRecreate,omitempty"`

	// terminationGracePeriodSeconds is the time the container gets between SIGTERM and SIGKILL,
	// preStop hook included. Defaulted from the probe, else from the pod; never below 2 seconds.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// minStartedSeconds is how long a new container must have been running before it counts as restarted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinStartedSeconds int32 `json:"minStartedSeconds,omitempty"`
}

// ContainerRecreateRequestPhase is the phase of a request or of one of its containers.
// +kubebuilder:validation:Enum=Pending;Recreating;Succeeded;Failed
type ContainerRecreateRequestPhase string

const (
	// RecreatePending means the request waits for the node daemon (or for another request of the pod).
	RecreatePending ContainerRecreateRequestPhase = "Pending"
	// RecreateRecreating means containers are being stopped and restarted.
	RecreateRecreating ContainerRecreateRequestPhase = "Recreating"
	// RecreateSucceeded means every container runs again under a new containerID.
	RecreateSucceeded ContainerRecreateRequestPhase = "Succeeded"
	// RecreateFailed means the request ended without restarting every container; see message.
	RecreateFailed ContainerRecreateRequestPhase = "Failed"
)

// ContainerRecreateRequestStatus reports progress. Each outcome has one writer: the node daemon
// runs the request and writes its progress, success or failure to restart; the manager fails
// requests whose pod is gone or replaced, that no daemon picked up, or whose deadline passed.
type ContainerRecreateRequestStatus struct {
	// phase of the request: Pending (waiting for the node daemon, or for another request of the
	// pod), Recreating (containers are being stopped and started again), Succeeded (every
	// container runs again under a new containerID) or Failed (the request ended without
	// restarting every container; message says why).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Phase",xDescriptors={"urn:alm:descriptor:io.kubernetes.phase"}
	Phase ContainerRecreateRequestPhase `json:"phase,omitempty"`

	// message says why the request is in its phase, for people.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Message",xDescriptors={"urn:alm:descriptor:text"}
	Message string `json:"message,omitempty"`

	// completionTime is when the request reached Succeeded or Failed.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Completion Time",xDescriptors={"urn:alm:descriptor:timestamp"}
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// containerRecreateStates holds the progress of each container.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ContainerRecreateStates []ContainerRecreateState `json:"containerRecreateStates,omitempty"`
}

// ContainerRecreateState is the progress of one container.
type ContainerRecreateState struct {
	// name of the container.
	// +required
	Name string `json:"name"`

	// phase of this container's restart: Pending, Recreating, Succeeded or Failed, as the
	// request's phase.
	// +required
	Phase ContainerRecreateRequestPhase `json:"phase"`

	// message says what happened, e.g. why the stop failed.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`

	// isKilled is true once the daemon stopped the container.
	// +optional
	IsKilled bool `json:"isKilled,omitempty"`

	// containerID is the container instance ("<runtime>://<id>") this entry restarts: the one the
	// daemon stops, or stopped. An instance the spec does not pin (no statusContext, or
	// forceRecreate) is recorded before the stop, so that a daemon restart never stops the
	// replacement container by mistake; a pinned one may be recorded just after its stop began.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	ContainerID string `json:"containerID,omitempty"`

	// stopInFlight is true from just before the daemon begins to stop containerID (preStop hook,
	// then the runtime's stop) until the daemon records that the stop returned, with success or
	// an error. A stop that went through is recorded with the new container when the kubelet
	// starts one within 5 seconds, else on its own after them. While it is true the request keeps
	// its pod, even past its active deadline: the pod counts as
	// unavailable, the request is neither failed at its deadline nor replaced. The daemon's
	// runtime timeout bounds a stop, so the return always comes while the daemon runs; a stop
	// still in flight 10 minutes past the deadline plus the grace period (its daemon gone) fails
	// the request.
	// +optional
	StopInFlight bool `json:"stopInFlight,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=crr
// +kubebuilder:selectablefield:JSONPath=`.status.phase`
// +kubebuilder:selectablefield:JSONPath=`.spec.podName`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Pod",type=string,JSONPath=`.spec.podName`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.metadata.labels.crr\.enhancedliveness\.io/node-name`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ContainerRecreateRequest asks the node daemon to restart containers of one pod in place
// (stop them through CRI; the kubelet starts them again). The decision controller creates them
// for failed liveness probes; a person may create one to restart a container by hand.
// +operator-sdk:csv:customresourcedefinitions:displayName="Container Recreate Request",resources={{Pod,v1,pods}}
type ContainerRecreateRequest struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec says what to restart; immutable.
	// +required
	Spec ContainerRecreateRequestSpec `json:"spec"`

	// status reports progress.
	// +optional
	Status ContainerRecreateRequestStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// ContainerRecreateRequestList contains a list of ContainerRecreateRequest
type ContainerRecreateRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []ContainerRecreateRequest `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &ContainerRecreateRequest{}, &ContainerRecreateRequestList{})
		return nil
	})
}
