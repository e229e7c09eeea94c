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

package protection

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// WorkloadRef names the workload a pod belongs to, in the pod's namespace.
type WorkloadRef struct {
	APIVersion string
	Kind       string
	Name       string
	UID        types.UID
}

// String is kind/name, used in events and logs.
func (w WorkloadRef) String() string { return w.Kind + "/" + w.Name }

// Key identifies the workload in the decision controller's bookkeeping.
func (w WorkloadRef) Key(namespace string) WorkloadKey {
	gv, _ := schema.ParseGroupVersion(w.APIVersion)
	return WorkloadKey{Namespace: namespace, Group: gv.Group, Kind: w.Kind, Name: w.Name}
}

// WorkloadKey identifies a workload across reconciles: the API group and kind (not the version,
// which may differ between references to the same object), namespace and name.
type WorkloadKey struct {
	Namespace, Group, Kind, Name string
}

// String is namespace/kind/name, for logs.
func (k WorkloadKey) String() string { return k.Namespace + "/" + k.Kind + "/" + k.Name }

// Owner is what an OwnerLookup found for a controller reference.
type Owner struct {
	// Controller is the owner's own controller reference, nil at the top.
	Controller *metav1.OwnerReference
	// Replicas is the owner's desired replicas, nil when the kind has none.
	Replicas *int32
}

// OwnerLookup finds the object a controller reference points to in namespace. It returns nil, nil
// when the object does not exist or its kind is not one the caller can read; resolution then
// stops at that reference.
type OwnerLookup func(ref metav1.OwnerReference) (*Owner, error)

// Workload is a resolved workload. Desired is nil when the top owner's kind has no replica count
// the controller can read; the caller then uses the number of pods it knows.
type Workload struct {
	Ref     WorkloadRef
	Desired *int32
}

// maxOwnerDepth bounds the walk up controller references (a cycle would otherwise never end).
const maxOwnerDepth = 5

// ResolveWorkload walks up controller references from the pod to the top owner the lookup can
// read (a ReplicaSet owned by a Deployment resolves to the Deployment). A pod without a controller
// is a workload of one, with itself as the reference.
func ResolveWorkload(pod metav1.Object, lookup OwnerLookup) (Workload, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		one := int32(1)
		return Workload{
			Ref:     WorkloadRef{APIVersion: "v1", Kind: "Pod", Name: pod.GetName(), UID: pod.GetUID()},
			Desired: &one,
		}, nil
	}
	var desired *int32
	o, err := lookup(*ref)
	if err != nil {
		return Workload{}, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	// Each owner is read once: the parent read to know whether the walk goes on is the next
	// step's owner (the policy-status controller resolves every enrolled pod of a namespace).
	for range maxOwnerDepth {
		if o == nil {
			break
		}
		desired = o.Replicas
		if o.Controller == nil {
			break
		}
		parent, err := lookup(*o.Controller)
		if err != nil {
			return Workload{}, fmt.Errorf("reading %s %s: %w", o.Controller.Kind, o.Controller.Name, err)
		}
		if parent == nil {
			// The parent cannot be read (unknown kind, or gone): the owner we have is the top.
			break
		}
		ref, o = o.Controller, parent
	}
	return Workload{
		Ref:     WorkloadRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID},
		Desired: desired,
	}, nil
}

// PodState is one pod of a workload as the budget sees it.
type PodState struct {
	Ready     bool
	ActiveCRR bool // an active ContainerRecreateRequest, or one created but not yet in the cache
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
}

// Available is Ready, not terminating, not being restarted and not recovering from a restart.
func (p PodState) Available() bool { return p.Ready && !p.ActiveCRR && !p.Recovering && !p.Terminating }

// WorkloadState is what the budget and the storm breaker need of one workload.
type WorkloadState struct {
	Ref     WorkloadRef
	Desired int32
	Pods    []PodState
	// Revision names the failing pod's own controller when it is not the workload itself (a
	// ReplicaSet of a Deployment: one revision of its pod template); RevisionUID is its UID.
	Revision    string
	RevisionUID types.UID
}

// Unavailable is desired replicas minus pods that are available, never below zero.
func (w WorkloadState) Unavailable() int32 {
	avail := int32(0)
	for _, p := range w.Pods {
		if p.Available() {
			avail++
		}
	}
	if u := w.Desired - avail; u > 0 {
		return u
	}
	return 0
}

// FailingPods counts pods with a Failed liveness state (terminating pods excluded: they are going
// away whatever their probe says).
func (w WorkloadState) FailingPods() int32 {
	n := int32(0)
	for _, p := range w.Pods {
		if p.Failing && !p.Terminating {
			n++
		}
	}
	return n
}

// SuspectPods counts pods that have started failing a liveness probe below its threshold.
func (w WorkloadState) SuspectPods() int32 {
	n := int32(0)
	for _, p := range w.Pods {
		if p.Suspect && !p.Failing && !p.Terminating {
			n++
		}
	}
	return n
}

// Storm reports whether failing and suspect pods together exceed maxFailing: with 10 replicas and
// maxFailing 50% (= 5), 5 are not a storm and 6 are. Counting the suspects holds a fleet-wide
// failure before its first pod reaches the failure threshold.
func (w WorkloadState) Storm(maxFailing int32) bool {
	return w.FailingPods()+w.SuspectPods() > maxFailing
}

// RevisionUnproven reports whether no pod of the failing pod's revision has passed its probe
// yet while some of its pods have not been probed at all, and how many those are. In a rollout
// whose probe is wrong the first new pod reaches its failure threshold while its siblings are
// still starting; their first results tell a broken pod from a broken revision.
func (w WorkloadState) RevisionUnproven() (unjudged int32, unproven bool) {
	if w.RevisionUID == "" {
		return 0, false
	}
	healthy := int32(0)
	for _, p := range w.Pods {
		if p.Controller != w.RevisionUID || p.Terminating {
			continue
		}
		switch {
		case p.Healthy:
			healthy++
		case !p.Failing && !p.Suspect:
			unjudged++
		}
	}
	return unjudged, healthy == 0 && unjudged > 0
}

// RevisionStorm looks at the pods of the failing pod's own revision (see Revision): a new pod
// template whose probe fails on every pod of it (a rollout with a wrong probe) is a storm even
// while the revision is still a small part of the workload. Only the revision's pods the probe has
// judged count (failing, suspect or healthy): in a rollout the newest pods are still starting or
// waiting for their first probe when the first ones reach their failure threshold, and a probe
// that has failed on every pod it has judged so far is no evidence that restarting helps. It
// returns the failing and suspect pods of the revision and its judged pods; maxFailingOf scales
// the policy's maxFailing to them. At least two pods must be failing: one broken pod alone is no
// storm.
func (w WorkloadState) RevisionStorm(maxFailingOf func(int32) int32) (bad, total int32, storm bool) {
	if w.RevisionUID == "" {
		return 0, 0, false
	}
	for _, p := range w.Pods {
		if p.Controller != w.RevisionUID || p.Terminating {
			continue
		}
		switch {
		case p.Failing || p.Suspect:
			bad++
			total++
		case p.Healthy:
			total++
		}
	}
	return bad, total, bad >= 2 && bad > maxFailingOf(total)
}
