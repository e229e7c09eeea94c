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

package rules

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Facts are what the decision knows of the cluster about one pod with failed liveness results,
// read from the manager's cache at one moment. The zero value of each field is the safe one
// where it matters: a daemon without a Lease is not reporting.
type Facts struct {
	// Pod is the pod's namespace and name; UID its UID.
	Pod types.NamespacedName
	UID types.UID
	// Found: the pod exists. Terminating: it is being deleted.
	Found, Terminating bool
	// RestartDisabled is the pod's emergency switch (the restart-disabled annotation).
	RestartDisabled bool
	Labels          map[string]string
	// Shadow: the pod was admitted in Shadow mode (its mode label): it kept its native liveness
	// probe, the kubelet restarts it and the operator never does, whatever its policies say now.
	// A pod admitted in Enforce mode, or by 0.1.0 (no label), is restarted by the operator.
	Shadow bool
	// Failures are the pod's Failed liveness results whose probe is still in its node's
	// NodePodProbe spec, in probe-name order.
	Failures []Failure
	// Node is the pod's node, as the node-storm rule sees it (only its name when no failure is
	// fresh).
	Node NodeState
	// Settings are the manager's flags the rules apply.
	Settings Settings

	// The rest is read only when a failure is not Stale.

	// Daemon is what the node daemon's Lease says.
	Daemon Daemon
	// Policies govern the pod.
	Policies Governing
	// PDBs are the PodDisruptionBudgets that select the pod; read only when no governing policy
	// sets maxUnavailable (budget.go).
	PDBs []PDB
	// Workload is the pod's workload with its pods, as the storm and budget rules see them.
	Workload WorkloadState
	// Self is the pod itself as the budget sees it.
	Self PodState
	// Refailures are the failed results of the containers the workload's pods run now: whether
	// the restarts made before helped.
	Refailures []Refailure
	// Elsewhere counts, by failed container, the workload's pods on other nodes whose same
	// container passes (facts.Reader.Elsewhere); read only when the governing policies evict.
	Elsewhere map[string]int
	// Placement is what keeps the pod where it is, for an eviction (evict.go); read only when
	// the governing policies evict.
	Placement Placement
}

// Instances returns the container instances of the pod's failures.
func (f *Facts) Instances() []Instance {
	out := make([]Instance, 0, len(f.Failures))
	for _, x := range f.Failures {
		out = append(out, x.Instance())
	}
	return out
}

// Settings are the manager's flags the rules apply.
type Settings struct {
	// RestartsEnabled is the manager-wide switch (--restarts).
	RestartsEnabled bool
	// NodeStorm is the node-storm rule.
	NodeStorm NodeStormRule
	// StormSettle is how long a storm that dropped within its limit keeps holding restarts
	// (--storm-settle-period); zero turns it off.
	StormSettle time.Duration
	// MaxUnavailable is the budget of a pod whose policies set no maxUnavailable and that no
	// PodDisruptionBudget selects (--default-max-unavailable); nil: FallbackMaxUnavailable.
	MaxUnavailable *intstr.IntOrString
}

// Failure is one Failed liveness result of the pod, with the probe it belongs to.
type Failure struct {
	// Probe names the probe, Container its container.
	Probe, Container string
	// ContainerID is the container instance the result was reported for; Running is the
	// instance running now ("" when the container is not running) and RestartCount the
	// container's restart count.
	ContainerID, Running string
	RestartCount         int32
	// ProbeTime is when the result was last taken (lastProbeTime, on the node's clock); Since
	// when it turned Failed (lastTransitionTime).
	ProbeTime, Since time.Time
	// The probe's timing: what fresh evidence and "soon after a restart" mean.
	Period, Timeout, Threshold, InitialDelay int32
	// ProbeGrace is the probe's terminationGracePeriodSeconds; Grace the grace period a stop
	// gives the container: the probe's, else the pod's, else the API's default.
	ProbeGrace *int64
	Grace      int64
	// Request is the name of the request that restarts this instance: one name per instance, so
	// that a decision made twice can never restart it twice.
	Request string
}

// Instance is the container instance the failure was reported for.
func (x Failure) Instance() Instance {
	return Instance{Container: x.Container, ContainerID: x.ContainerID}
}

// Instance is one container instance of a pod: decisions are made, and holds remembered, per
// instance, so that a new container after a restart starts with a clean slate.
type Instance struct {
	Container, ContainerID string
}

// Daemon is what the node daemon's Lease says.
type Daemon struct {
	// Reporting: the Lease was renewed within its duration when it was read.
	Reporting bool
	// Started is when the daemon process started (the Lease's acquireTime), Renewed its last
	// heartbeat (renewTime); both on the node's clock.
	Started, Renewed time.Time
}

// PodState is one pod of a workload as the storm and budget rules see it. Failing, Suspect,
// Healthy and Onset are the pod's evidence as a whole (any of its containers); the rules judge
// one container at a time (For), from Containers.
type PodState struct {
	UID   types.UID
	Ready bool
	// ActiveCRR: an active ContainerRecreateRequest in the cache. The rules also count the
	// requests the memory expects (active.go).
	ActiveCRR bool
	// Finished names the pod's finished requests in the cache: an expected request among them
	// is over.
	Finished []string
	// Recovering: a restart of the pod finished but has not given it back yet (the stopped
	// instance is still there, or its replacement is not ready).
	Recovering bool
	Failing    bool // at least one liveness state Failed
	// Suspect: a liveness probe has started failing, below its failure threshold (early storm
	// evidence); not set when Failing.
	Suspect bool
	// Healthy: its liveness probes have passed and none is failing. A pod that has not been
	// probed yet (just started, or in its initialDelaySeconds) is neither healthy nor failing.
	Healthy     bool
	Terminating bool
	// Controller is the UID of the pod's own controller (its ReplicaSet in a Deployment).
	Controller types.UID
	// Onset is when the manager first saw the pod's current failures (its earliest failing or
	// suspect container instance), on the manager's clock; zero when it is not failing.
	Onset time.Time
	// Containers is the evidence of each probed container. Nil: the pod is judged as a whole
	// (a pod state built with one container in mind).
	Containers []ContainerState
}

// ContainerState is what one container's liveness probe says.
type ContainerState struct {
	Name string
	// Failing: its state is Failed; Suspect: it has started failing, below its threshold;
	// Healthy: it has passed and is not failing.
	Failing, Suspect, Healthy bool
	// Onset is when the manager first saw its current failure (zero when not failing).
	Onset time.Time
	// Running is the instance running now ("" when it is not running).
	Running string
}

// For returns the pod as the rules judge one of its containers: its evidence is that container's
// alone (a pod without it is neither failing nor healthy), so that a sidecar's failures never
// count toward the storms, the breaker or the canary of another container.
func (p PodState) For(container string) PodState {
	if p.Containers == nil {
		return p
	}
	out := p
	out.Failing, out.Suspect, out.Healthy, out.Onset = false, false, false, time.Time{}
	for _, c := range p.Containers {
		if c.Name == container {
			out.Failing, out.Suspect, out.Healthy, out.Onset = c.Failing, c.Suspect && !c.Failing, c.Healthy, c.Onset
		}
	}
	return out
}

// Running returns the instance of container the pod runs now, and whether it is known.
func (p PodState) Running(container string) (string, bool) {
	for _, c := range p.Containers {
		if c.Name == container {
			return c.Running, true
		}
	}
	return "", false
}

// WorkloadState is what the storm and budget rules need of one workload.
type WorkloadState struct {
	Ref     WorkloadRef
	Desired int32
	Pods    []PodState
	// Revision names the failing pod's own controller when it is not the workload itself (a
	// ReplicaSet of a Deployment: one revision of its pod template); RevisionUID is its UID.
	Revision    string
	RevisionUID types.UID
	// Onset is the decided pod's Onset: only pods whose failures began within StormCorrelation of
	// it count toward its storms (Correlated). Zero (the policy status) counts every pod.
	Onset time.Time
}

// For returns the workload as the rules judge one container of its pods (PodState.For). The
// pods are a copy: the facts are not changed.
func (w WorkloadState) For(container string) WorkloadState {
	out := w
	out.Pods = make([]PodState, len(w.Pods))
	for i, p := range w.Pods {
		out.Pods[i] = p.For(container)
	}
	return out
}

// Containers returns the names of the containers probed in the workload's pods, in order of
// first appearance.
func (w WorkloadState) Containers() []string {
	var out []string
	for _, p := range w.Pods {
		for _, c := range p.Containers {
			if !slices.Contains(out, c.Name) {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

// HoldKey names what a workload-level hold is about: one container (one probe) of a workload's
// pods. Storms, restarts that do not help and their canaries are judged per key, never per pod:
// a sidecar failing everywhere is no reason to hold a hang of the app container beside it.
type HoldKey struct {
	Workload  WorkloadKey
	Container string
}

// String is namespace/kind/name/container, for logs.
func (k HoldKey) String() string { return k.Workload.String() + "/" + k.Container }

// NodeState is what the node-storm rule needs of one node.
type NodeState struct {
	Name string
	// Pods is the number of enrolled pods on the node.
	Pods int32
	// FailingPods is the number of those with a Failed liveness state, or one that has started
	// failing (suspect).
	FailingPods int32
	// FailingWorkloads is the number of distinct workloads with such a pod on the node.
	FailingWorkloads int32
}

// Refailure is a Failed liveness result of the container instance a pod runs now.
type Refailure struct {
	Pod         types.UID
	Container   string
	ContainerID string
	// Started is when the instance started; FailedAt when its result turned Failed.
	Started, FailedAt time.Time
}
