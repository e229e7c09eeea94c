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
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The ContainerRecreateRequest contract. SetDefaults writes every default into a request; the
// webhook calls it on every request created, the decision controller on the requests it builds.
// The methods below apply the same defaults to a request that did not go through either (an
// object built in memory, or one created while the webhook was off).
const (
	// DefaultActiveDeadlineSeconds bounds a request, from its creation, unless its grace period
	// needs longer (ActiveDeadlineSecondsFor).
	DefaultActiveDeadlineSeconds int64 = 600
	// RestartMarginSeconds is the part of the deadline that is not the grace period: picking the
	// request up (the manager fails it after a minute without a daemon) and the kubelet starting
	// the new container.
	RestartMarginSeconds int64 = 180
	// MinActiveDeadlineSeconds leaves the node daemon time to pick a request up and stop a container.
	MinActiveDeadlineSeconds int64 = 3
	// DefaultTTLSecondsAfterFinished keeps finished requests this long before they are deleted.
	DefaultTTLSecondsAfterFinished int32 = 300
	// DefaultTerminationGracePeriodSeconds is the pod's grace period when it sets none (the Pod
	// API default).
	DefaultTerminationGracePeriodSeconds int64 = 30
	// MinTerminationGracePeriodSeconds is the shortest time between SIGTERM and SIGKILL a
	// container is given, like the kubelet's minimum when it kills a container.
	MinTerminationGracePeriodSeconds int64 = 2
	// MaxMessageLength is the longest status message, of the request and of each container, that
	// the API accepts (the MaxLength markers on the status fields say the same).
	MaxMessageLength = 1024
)

// SetDefaults writes every default of the request into it, from the pod whose containers it
// restarts: the labels that tie it to the pod and its node (crr.enhancedliveness.io/pod-uid,
// node-name), failurePolicy Fail, the grace period, the TTL and the active deadline.
// probeGrace returns a container's liveness-probe terminationGracePeriodSeconds, nil when the
// probe sets none. A value the creator set is kept.
func (r *ContainerRecreateRequest) SetDefaults(pod *corev1.Pod, probeGrace func(container string) *int64) {
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	r.Labels[LabelCRRPodUID] = string(pod.UID)
	r.Labels[LabelCRRNodeName] = pod.Spec.NodeName

	s := &r.Spec.Strategy
	if s.FailurePolicy == "" {
		s.FailurePolicy = FailurePolicyFail
	}
	if s.TerminationGracePeriodSeconds == nil {
		// One request gets the longest of its containers' grace periods, so none is cut short.
		grace := TerminationGracePeriodFor(nil, pod)
		for i, c := range r.Spec.Containers {
			if g := TerminationGracePeriodFor(probeGrace(c.Name), pod); i == 0 || g > grace {
				grace = g
			}
		}
		s.TerminationGracePeriodSeconds = &grace
	}
	if r.Spec.TTLSecondsAfterFinished == nil {
		ttl := DefaultTTLSecondsAfterFinished
		r.Spec.TTLSecondsAfterFinished = &ttl
	}
	if r.Spec.ActiveDeadlineSeconds == nil {
		d := ActiveDeadlineSecondsFor(*s.TerminationGracePeriodSeconds, s.MinStartedSeconds)
		r.Spec.ActiveDeadlineSeconds = &d
	}
}

// TerminationGracePeriodFor is the grace period a container gets between the start of its preStop
// hook and SIGKILL: given (its liveness probe's terminationGracePeriodSeconds, or the request's)
// when set, else the pod's, else the Pod API's default. The node daemon never stops with less
// than MinTerminationGracePeriodSeconds.
func TerminationGracePeriodFor(given *int64, pod *corev1.Pod) int64 {
	switch {
	case given != nil:
		return *given
	case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	default:
		return DefaultTerminationGracePeriodSeconds
	}
}

// GracePeriodSeconds is the grace period the request gives its containers (pod may be nil).
func (r *ContainerRecreateRequest) GracePeriodSeconds(pod *corev1.Pod) int64 {
	return TerminationGracePeriodFor(r.Spec.Strategy.TerminationGracePeriodSeconds, pod)
}

// ActiveDeadlineSecondsFor is the deadline of a request whose containers get graceSeconds between
// the start of their preStop hook and SIGKILL and must then run for minStartedSeconds: never
// shorter than the time the restart itself may legitimately take, so that a long grace period
// cannot outlive the request (and with it the budget it holds).
func ActiveDeadlineSecondsFor(graceSeconds int64, minStartedSeconds int32) int64 {
	return max(DefaultActiveDeadlineSeconds, graceSeconds+int64(minStartedSeconds)+RestartMarginSeconds)
}

// Finished reports whether a phase is terminal (Succeeded or Failed).
func (p ContainerRecreateRequestPhase) Finished() bool {
	return p == RecreateSucceeded || p == RecreateFailed
}

// Finished reports whether the request reached Succeeded or Failed.
func (r *ContainerRecreateRequest) Finished() bool { return r.Status.Phase.Finished() }

// Active reports whether the request still holds its pod: not finished and not being deleted.
// status.phase is a selectable field, so unfinished requests can be listed by it.
func (r *ContainerRecreateRequest) Active() bool {
	return !r.Finished() && r.DeletionTimestamp == nil
}

// StopInFlight reports whether the daemon has begun a stop of one of the request's containers
// and not yet seen it return (status.containerRecreateStates[].stopInFlight). Such a request keeps
// its pod whatever its phase: the decision counts the pod as restarting (budget taken, no second
// request), and the manager neither fails it at its deadline nor lets it be replaced.
func (r *ContainerRecreateRequest) StopInFlight() bool {
	for _, s := range r.Status.ContainerRecreateStates {
		if s.StopInFlight {
			return true
		}
	}
	return false
}

// ActiveDeadline is how long the request may take, from its creation: its activeDeadlineSeconds,
// else the default SetDefaults would have written for its grace period.
func (r *ContainerRecreateRequest) ActiveDeadline() time.Duration {
	secs := ActiveDeadlineSecondsFor(r.GracePeriodSeconds(nil), r.Spec.Strategy.MinStartedSeconds)
	if r.Spec.ActiveDeadlineSeconds != nil {
		secs = *r.Spec.ActiveDeadlineSeconds
	}
	return time.Duration(secs) * time.Second
}

// Deadline is when an unfinished request fails.
func (r *ContainerRecreateRequest) Deadline() time.Time {
	return r.CreationTimestamp.Add(r.ActiveDeadline())
}

// TTLAfterFinished is how long a finished request is kept before it is deleted.
func (r *ContainerRecreateRequest) TTLAfterFinished() time.Duration {
	ttl := DefaultTTLSecondsAfterFinished
	if r.Spec.TTLSecondsAfterFinished != nil {
		ttl = *r.Spec.TTLSecondsAfterFinished
	}
	return time.Duration(ttl) * time.Second
}
