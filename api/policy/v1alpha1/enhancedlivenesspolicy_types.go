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
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PolicyMode is the per-namespace switch. The pod webhook applies it when it admits a pod, and
// the pod keeps that mode for its life (its label enhancedliveness.io/mode).
// +kubebuilder:validation:Enum=Enforce;Shadow;DryRun
type PolicyMode string

const (
	// ModeEnforce moves the native liveness probes of the pods it admits to the operator, which
	// restarts a container whose probe fails, within the policy's limits.
	ModeEnforce PolicyMode = "Enforce"
	// ModeShadow leaves the native liveness probes of the pods it admits with the kubelet, which
	// restarts them as before; the operator probes beside it and records what it would have
	// restarted (RestartHeld events with reason Shadow), and never restarts or evicts such a pod.
	ModeShadow PolicyMode = "Shadow"
	// ModeDryRun is the 0.1.0 name of Shadow, accepted as an alias and deprecated: it admits pods
	// in Shadow mode.
	ModeDryRun PolicyMode = "DryRun"
)

// IsShadow reports whether m admits pods in Shadow mode: Shadow, or its deprecated alias DryRun.
func (m PolicyMode) IsShadow() bool {
	return m == ModeShadow || m == ModeDryRun
}

// EnhancedLivenessPolicySpec says how restarts of the pods it selects are protected.
type EnhancedLivenessPolicySpec struct {
	// selector picks the pods of this namespace the policy governs. Unset or {} (an empty
	// selector) selects every pod of the namespace.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod Selector",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:selector:core:v1:Pod"}
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// enroll, when true, enrolls the selected pods at creation without the pod annotation
	// enhancedliveness.io/enabled.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Enroll Selected Pods",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	Enroll bool `json:"enroll,omitempty"`

	// mode is Enforce or Shadow, applied to each pod when it is admitted and kept by the pod for
	// its life. Enforce: the pod's native liveness probes move to the operator, which restarts
	// within the limits below. Shadow: the pod keeps its native liveness probes (the kubelet
	// restarts it as before) and the operator probes beside them, recording what it would have
	// restarted, never restarting it. A pod several policies select is admitted in Shadow when any
	// of them says Shadow. Changing the mode changes the pods admitted from then on: re-create
	// the others (kubectl rollout restart). DryRun is the deprecated name of Shadow, accepted.
	// +kubebuilder:default=Enforce
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Mode",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Enforce","urn:alm:descriptor:com.tectonic.ui:select:Shadow"}
	Mode PolicyMode `json:"mode,omitempty"`

	// blacklist lists what the operator never restarts.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Blacklist"
	Blacklist *Blacklist `json:"blacklist,omitempty"`

	// rateLimit is a token bucket shared by every pod the policy governs.
	// +kubebuilder:default={}
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Rate Limit"
	RateLimit RateLimit `json:"rateLimit,omitzero"`

	// maxUnavailable is how many pods of one workload may be unavailable (not Ready, or being
	// restarted) before a restart is held: an integer, or a percent of the desired replicas
	// rounded up. A pod that is already unavailable may always be restarted. When no governing
	// policy sets it, the PodDisruptionBudgets that select the pod set the budget as the eviction
	// API reads them (the most restrictive; with IfHealthyBudget, an unavailable pod is restarted
	// only while the workload is within it); with no PodDisruptionBudget, the manager's
	// --default-max-unavailable (25%). Several policies that set it: the smallest.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="must be an integer >= 0 or a percent from 0% to 100%"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Max Unavailable",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// maxFailing is the failure-storm breaker: when more pods of one workload have a failing
	// liveness probe than this (an integer, or a percent of desired replicas rounded up), every
	// restart of that workload is held until the number drops. The failures are then more likely
	// a bad probe or a shared dependency than broken containers.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="must be an integer >= 0 or a percent from 0% to 100%"
	// +kubebuilder:default="50%"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Max Failing",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	MaxFailing *intstr.IntOrString `json:"maxFailing,omitempty"`

	// restartEffectiveness is the breaker for restarts that do not help: when the containers the
	// operator restarted in a workload fail their liveness probe again soon after the restart
	// (within initialDelaySeconds + (failureThreshold + 3) probe periods of the new container's
	// start), most of them, further restarts of that workload are held (RestartIneffective).
	// +kubebuilder:default={}
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Restart Effectiveness"
	RestartEffectiveness RestartEffectiveness `json:"restartEffectiveness,omitzero"`

	// maxHold is the longest wait between two canaries of a doubt hold (FailureStorm, NodeStorm,
	// RestartIneffective). The first canary, one held pod restarted within maxUnavailable and the
	// rate limit, goes 30s after the hold's onset; each canary whose new container fails again soon
	// after its restart doubles the wait, up to maxHold. Once a canary's new container passes its
	// probe and does not fail again for the time that judges a restart, the other held pods follow
	// within maxUnavailable, past the rate limit, for maxHold from then. A DaemonNotReporting hold
	// gets no canary: it ends when the node's daemon reports again. A duration of at least 1m and
	// at most 24h, or "0s": doubt holds end only with their cause (only on purpose).
	// A MaxUnavailable hold behind unavailability the operator is not causing (pods not ready by
	// themselves, Pending or held by choice, missing replicas) ends maxHold after its onset, when
	// that stops counting; the operator's own restarts, and RateLimited holds, end by themselves.
	// +kubebuilder:validation:XValidation:rule="duration(self) == duration('0s') || (duration(self) >= duration('1m') && duration(self) <= duration('24h'))",message="maxHold must be 0s (doubt holds never end) or between 1m and 24h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:default="10m"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Max Hold",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	MaxHold *metav1.Duration `json:"maxHold,omitempty"`
}

// BreakerMode switches a breaker on or off.
// +kubebuilder:validation:Enum=Enforce;Disabled
type BreakerMode string

const (
	// BreakerEnforce holds restarts while the breaker is tripped.
	BreakerEnforce BreakerMode = "Enforce"
	// BreakerDisabled turns the breaker off.
	BreakerDisabled BreakerMode = "Disabled"
)

// IneffectiveAction is what is done with a pod whose restarts do not help.
// +kubebuilder:validation:Enum=Hold;Evict
type IneffectiveAction string

const (
	// IneffectiveHold holds the pod's restarts (RestartIneffective).
	IneffectiveHold IneffectiveAction = "Hold"
	// IneffectiveEvict evicts the pod (the Eviction API, so PodDisruptionBudgets apply) when its
	// workload's same container passes on another node; otherwise it is held as with Hold.
	IneffectiveEvict IneffectiveAction = "Evict"
)

// RestartEffectiveness configures the breaker for restarts that do not help.
// +kubebuilder:validation:XValidation:rule="!has(self.action) || self.action != 'Evict' || !has(self.mode) || self.mode != 'Disabled'",message="action Evict needs mode Enforce: a disabled breaker never finds a pod whose restarts do not help"
type RestartEffectiveness struct {
	// mode is Enforce (hold the workload's restarts while the breaker is tripped) or Disabled.
	// +kubebuilder:default=Enforce
	// +optional
	Mode BreakerMode `json:"mode,omitempty"`

	// action is what is done with a pod held because its restarts do not help (RestartIneffective):
	// Hold (the default) keeps holding its restarts; Evict evicts the pod through the Eviction API
	// (PodDisruptionBudgets apply), once per window, when the same container of its workload passes
	// its probe on another node: the failure is likely the node's, and the workload's controller
	// makes a replacement. The eviction spends a rate-limit token and counts as unavailable, as a
	// restart does. With no sibling passing elsewhere, or an eviction refused, the pod stays held.
	// Evict needs mode Enforce.
	// +kubebuilder:default=Hold
	// +optional
	Action IneffectiveAction `json:"action,omitempty"`

	// minIneffective is how many of a workload's restarts within window must have failed again
	// soon before the breaker trips; they must also be more than half of its restarts in window.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=2
	// +optional
	MinIneffective int32 `json:"minIneffective,omitempty"`

	// window is how far back a workload's restarts are counted; the breaker resets by itself as
	// ineffective restarts age out of it. A duration such as 10m; at least 1m, at most 24h.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('24h')",message="must be between 1m and 24h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:default="10m"
	// +optional
	Window *metav1.Duration `json:"window,omitempty"`
}

// Blacklist lists workloads, pods and containers the operator never restarts. They are still
// probed and reported.
type Blacklist struct {
	// workloads by top-level owner (a Deployment for pods of its ReplicaSets).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Workloads []WorkloadReference `json:"workloads,omitempty"`

	// podSelector blacklists the governed pods whose labels it matches. Unset matches no pod;
	// {} (an empty selector) matches every pod, so the policy restarts nothing (its pods are
	// still probed and reported).
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`

	// containers by name, in any selected pod.
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +optional
	Containers []string `json:"containers,omitempty"`
}

// WorkloadReference names a workload in the policy's namespace.
type WorkloadReference struct {
	// apiVersion of the workload, e.g. apps/v1.
	// +kubebuilder:validation:MinLength=1
	// +required
	APIVersion string `json:"apiVersion"`

	// kind of the workload, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	// +required
	Kind string `json:"kind"`

	// name of the workload.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
}

// RateLimit is a token bucket: it holds up to burst tokens and gains restartsPerMinute of them
// every minute; each restart takes one.
type RateLimit struct {
	// restartsPerMinute is the refill rate.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=6
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Restarts Per Minute",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	RestartsPerMinute int32 `json:"restartsPerMinute,omitempty"`

	// burst is the bucket size: how many restarts may happen at once after a quiet period.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=3
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Burst",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	Burst int32 `json:"burst,omitempty"`
}

// Condition types of EnhancedLivenessPolicy.
const (
	// ConditionReady is True when the policy is valid and being applied.
	ConditionReady = "Ready"
	// ConditionStormDetected is True while at least one workload the policy governs is over maxFailing.
	ConditionStormDetected = "StormDetected"
	// ConditionRestartsIneffective is True while at least one workload the policy governs is held
	// because its restarts did not help.
	ConditionRestartsIneffective = "RestartsIneffective"
)

// EnhancedLivenessPolicyStatus is written by the decision controller.
type EnhancedLivenessPolicyStatus struct {
	// observedGeneration is the spec generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions, one per type: Ready (True with reason Applied; False with reason InvalidSpec:
	// the spec is invalid and the policy is not applied), StormDetected (True with reason
	// FailureStorm while a governed workload is over maxFailing; False with reason NoStorm) and
	// RestartsIneffective (True with reason RestartIneffective while a governed workload's
	// restarts are held because they did not help; False with reason RestartsHelp).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// enrolledPods is the number of enrolled pods the policy selects.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Enrolled Pods",xDescriptors={"urn:alm:descriptor:text"}
	EnrolledPods int32 `json:"enrolledPods,omitempty"`

	// shadowPods is the number of the enrolled pods the policy selects that were admitted in
	// Shadow mode (label enhancedliveness.io/mode: Shadow): they keep their native liveness probes
	// and the operator never restarts them; the others were admitted in Enforce mode.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Shadow Pods",xDescriptors={"urn:alm:descriptor:text"}
	ShadowPods int32 `json:"shadowPods,omitempty"`

	// failingContainers is the number of containers whose last liveness state is Failed.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Failing Containers",xDescriptors={"urn:alm:descriptor:text"}
	FailingContainers int32 `json:"failingContainers,omitempty"`

	// unprobedContainers is the number of containers of the enrolled pods the policy selects that
	// no daemon probes: the webhook moved their liveness probe to the operator, so they have no
	// liveness. Their node's daemon reports them NotProbed (its trust gate refused the pod, ...),
	// has never written its report or is not renewing its Lease, or the pod is not in its node's
	// NodePodProbe. Such a container is never restarted; the EnhancedLivenessUnprobedContainers
	// alert fires while any remain.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Unprobed Containers",xDescriptors={"urn:alm:descriptor:text"}
	UnprobedContainers int32 `json:"unprobedContainers,omitempty"`

	// restartsRequested counts the restarts requested (ContainerRecreateRequests created) since the
	// policy was created.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Restarts Requested",xDescriptors={"urn:alm:descriptor:text"}
	RestartsRequested int64 `json:"restartsRequested,omitempty"`

	// restartsHeld counts the restarts held since the policy was created, all reasons together.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Restarts Held",xDescriptors={"urn:alm:descriptor:text"}
	RestartsHeld int64 `json:"restartsHeld,omitempty"`

	// heldByReason splits restartsHeld by reason (DaemonNotReporting, Disabled, Shadow,
	// Blacklisted, FailureStorm, NodeStorm, RestartIneffective, MaxUnavailable, RateLimited; a
	// count 0.1.0 made may also say DryRun, the old name of Shadow).
	// +listType=map
	// +listMapKey=reason
	// +optional
	HeldByReason []HeldCount `json:"heldByReason,omitempty"`

	// lastRestartTime is when the policy last let a restart through.
	// +optional
	LastRestartTime *metav1.Time `json:"lastRestartTime,omitempty"`

	// workloads summarises the workloads with failing or held pods, worst first, at most 20.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Workloads []WorkloadSummary `json:"workloads,omitempty"`

	// heldPods lists the restarts held now in the pods the policy governs, longest held first,
	// at most 50; heldPodsTotal counts them all.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	// +optional
	HeldPods []HeldPod `json:"heldPods,omitempty"`

	// heldPodsTotal is the number of restarts held now in the pods the policy governs.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Held Now",xDescriptors={"urn:alm:descriptor:text"}
	HeldPodsTotal int32 `json:"heldPodsTotal,omitempty"`

	// figures says what enrolling avoided and what it cost, per workload, over a window of at
	// most 24 hours: the restarts the kubelet made (Shadow mode) or would have made (Enforce mode)
	// that the engine held (avoided) or made too (agreed), and how long after the kubelet's moment
	// (the failure's lastTransitionTime) the engine restarted. Each container instance's failure
	// counts once. Unset until the first such restart.
	// +optional
	Figures *EnrollingFigures `json:"figures,omitempty"`

	// recentEvictions lists the evictions the policy decided (restartEffectiveness.action Evict)
	// whose window has not passed, newest first, at most 16. Each is written before the Eviction
	// API is called, so it also stands for an eviction that was refused. While an entry lasts, the
	// pod webhook steers new pods of the same owner away from its node (a preferred node
	// affinity), and no new leader evicts the same pod again. No entry is dropped before it
	// expires: while 16 last, the policy evicts no other pod (it stays held RestartIneffective,
	// saying so) until the first expires.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	RecentEvictions []RecentEviction `json:"recentEvictions,omitempty"`
}

// RecentEviction is one eviction a policy decided, kept until its window passes.
type RecentEviction struct {
	// pod is the name of the evicted pod.
	// +kubebuilder:validation:MaxLength=253
	Pod string `json:"pod"`

	// podUID is the UID of the evicted pod.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	PodUID types.UID `json:"podUID"`

	// ownerKind and ownerName name the pod's controller (for a Deployment's pod, its ReplicaSet):
	// the webhook steers the new pods of that owner.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	OwnerKind string `json:"ownerKind,omitempty"`
	// +kubebuilder:validation:MaxLength=253
	// +optional
	OwnerName string `json:"ownerName,omitempty"`

	// node is the node the pod's restarts did not help on.
	// +kubebuilder:validation:MaxLength=253
	Node string `json:"node"`

	// container is the container whose restarts did not help.
	// +kubebuilder:validation:MaxLength=63
	Container string `json:"container"`

	// time is when the eviction was decided, on the API server's clock as the manager measures it.
	Time metav1.Time `json:"time"`

	// expires is when the entry lapses: the eviction's time plus restartEffectiveness.window.
	Expires metav1.Time `json:"expires"`
}

// HeldPod is one container whose restart is held now.
type HeldPod struct {
	// pod is the pod's name, in the policy's namespace.
	// +required
	Pod string `json:"pod"`

	// container is the container whose restart is held.
	// +required
	Container string `json:"container"`

	// reason the restart is held for: DaemonNotReporting, Disabled, Shadow, Blacklisted,
	// FailureStorm, NodeStorm, RestartIneffective, MaxUnavailable or RateLimited (DryRun, the
	// old name of Shadow, only in a status 0.1.0 wrote).
	// +required
	Reason HoldReason `json:"reason"`

	// since is when the restart began to be held for reason.
	// +required
	Since metav1.Time `json:"since"`

	// message says why, in the decision's own words with the numbers it compared, e.g.
	// `3 of 3 pods of Deployment/web are failing, more than maxFailing 1 (policy shop/default)`:
	// the message of the pod's RestartHeld event, as the decision wrote it when the hold began for
	// reason (the RestartStillHeld events tell the numbers since). At most 512 bytes: a longer
	// message is cut and ends with "...". Empty in an entry an earlier version of the manager wrote.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Message string `json:"message,omitempty"`
}

// MaxHeldPodMessageLength is the longest status.heldPods[].message, in bytes: the marker on
// HeldPod.Message repeats it (a test compares the generated CRD with it). 50 entries of it keep
// the policy's status small.
const MaxHeldPodMessageLength = 512

// HeldCount is how many restarts were held for one reason.
// EnrollingFigures is what enrolling avoided and cost, per workload, since windowStart.
type EnrollingFigures struct {
	// windowStart is when the window began: the figures count from it; 24 hours later they are
	// cleared, and the next figure starts a new window.
	// +required
	WindowStart metav1.Time `json:"windowStart"`

	// workloads are the workloads with a figure in the window, most restarts (avoided and agreed)
	// first, at most 20.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Workloads []WorkloadFigures `json:"workloads,omitempty"`
}

// WorkloadFigures is what enrolling avoided and cost for the pods of one workload admitted in
// one mode.
type WorkloadFigures struct {
	// workload is the top-level owner (apiVersion, kind, name); a pod without owner stands for itself.
	// +required
	Workload WorkloadReference `json:"workload"`

	// mode the pods were admitted in: Enforce (the kubelet would have restarted them, the engine
	// decided) or Shadow (the kubelet restarted them, the engine judged beside it).
	// +kubebuilder:validation:Enum=Enforce;Shadow
	// +required
	Mode string `json:"mode"`

	// avoided counts the kubelet's restarts the engine held (would have held, in Shadow mode).
	// +optional
	Avoided int32 `json:"avoided,omitempty"`

	// avoidedByReason splits avoided by hold reason.
	// +listType=map
	// +listMapKey=reason
	// +kubebuilder:validation:MaxItems=16
	// +optional
	AvoidedByReason []HeldCount `json:"avoidedByReason,omitempty"`

	// agreed counts the kubelet's restarts the engine made too (would have made, in Shadow mode).
	// +optional
	Agreed int32 `json:"agreed,omitempty"`

	// addedSeconds are the times the engine's restart came after the kubelet's moment, in whole
	// seconds, of the last 20 agreed restarts of the window, oldest first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +optional
	AddedSeconds []int32 `json:"addedSeconds,omitempty"`

	// addedP50Seconds is the median of addedSeconds.
	// +optional
	AddedP50Seconds int32 `json:"addedP50Seconds,omitempty"`

	// addedMaxSeconds is the longest time added in the window.
	// +optional
	AddedMaxSeconds int32 `json:"addedMaxSeconds,omitempty"`
}

type HeldCount struct {
	// reason the restarts were held: DaemonNotReporting, Disabled, Shadow, Blacklisted,
	// FailureStorm, NodeStorm, RestartIneffective, MaxUnavailable or RateLimited (DryRun, the
	// old name of Shadow, in a count 0.1.0 made).
	// +required
	Reason HoldReason `json:"reason"`

	// count of held restarts.
	// +required
	Count int64 `json:"count"`
}

// WorkloadSummary is the state of one workload.
type WorkloadSummary struct {
	// workload is the top-level owner (apiVersion, kind, name); a pod without owner stands for itself.
	// +required
	Workload WorkloadReference `json:"workload"`

	// desiredReplicas of the workload.
	// +optional
	DesiredReplicas int32 `json:"desiredReplicas,omitempty"`

	// unavailable is desired replicas minus pods that are Ready and not being restarted.
	// +optional
	Unavailable int32 `json:"unavailable,omitempty"`

	// failingPods is the number of pods with a Failed liveness state.
	// +optional
	FailingPods int32 `json:"failingPods,omitempty"`

	// suspectPods is the number of pods whose liveness probe has started failing, below its
	// failure threshold (early storm evidence).
	// +optional
	SuspectPods int32 `json:"suspectPods,omitempty"`

	// heldReason is set while the workload's restarts are held: FailureStorm while it is in a
	// storm or settling after one, else the first in decision order of the reasons its pods are
	// held for (DaemonNotReporting, Disabled, Shadow, Blacklisted, FailureStorm, NodeStorm,
	// RestartIneffective, MaxUnavailable, RateLimited; DryRun, the old name of Shadow, only in a
	// status 0.1.0 wrote).
	// +optional
	HeldReason HoldReason `json:"heldReason,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=elp
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Enrolled",type=integer,JSONPath=`.status.enrolledPods`
// +kubebuilder:printcolumn:name="Shadow",type=integer,JSONPath=`.status.shadowPods`
// +kubebuilder:printcolumn:name="Failing",type=integer,JSONPath=`.status.failingContainers`
// +kubebuilder:printcolumn:name="Unprobed",type=integer,JSONPath=`.status.unprobedContainers`
// +kubebuilder:printcolumn:name="Held",type=integer,JSONPath=`.status.heldPodsTotal`,description="Restarts held now"
// +kubebuilder:printcolumn:name="Oldest Hold",type=date,JSONPath=`.status.heldPods[0].since`,description="How long the longest-held restart has been held"
// +kubebuilder:printcolumn:name="Storm",type=string,JSONPath=`.status.conditions[?(@.type=="StormDetected")].status`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// EnhancedLivenessPolicy governs the liveness restarts of the pods it selects in its namespace:
// a switch (Enforce or Shadow), a blacklist, a rate limit, a per-workload unavailability budget
// and a failure-storm breaker. Pods no policy selects get the manager's default policy.
// +operator-sdk:csv:customresourcedefinitions:displayName="Enhanced Liveness Policy",resources={{Pod,v1,pods},{ContainerRecreateRequest,v1alpha1,containerrecreaterequests}}
type EnhancedLivenessPolicy struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines how restarts are protected. An empty spec governs every pod of the namespace
	// with the defaults below.
	// +kubebuilder:default={}
	// +optional
	Spec EnhancedLivenessPolicySpec `json:"spec,omitzero"`

	// status reports what the policy did.
	// +optional
	Status EnhancedLivenessPolicyStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// EnhancedLivenessPolicyList contains a list of EnhancedLivenessPolicy
type EnhancedLivenessPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []EnhancedLivenessPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &EnhancedLivenessPolicy{}, &EnhancedLivenessPolicyList{})
		return nil
	})
}
