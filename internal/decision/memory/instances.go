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

package memory

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// instance is what the decision remembers of one failing container instance of a pod: when a
// decision first saw its failure (on the manager's clock: how long a failure has lasted is never
// read from the node's clock), and what its last decision left pending, a hold or a wait, with
// the workload and node whose events may end it.
type instance struct {
	firstSeen time.Time
	// hold is its held restart, nil when it is not held. waiting: its last decision was a Wait,
	// decided again on its requeue and sooner when something happens in its workload (a
	// sibling's first probe result ends the wait for a new revision's evidence).
	hold    *hold
	waiting bool

	workload rules.WorkloadKey
	node     string
}

// pending reports whether the instance is held or waits: an event in its workload may decide it
// again.
func (x *instance) pending() bool { return x.hold != nil || x.waiting }

// hold is a restart the decision holds.
type hold struct {
	reason policyv1alpha1.HoldReason
	// since it is held for reason and when an event last told it (rules.HeldRecord).
	since, announced time.Time
	// message is the verdict's message when the hold began for reason, the one its RestartHeld
	// event tells. Kept, not refreshed per decision: a message whose numbers move would
	// otherwise change the policy status at each of its refreshes.
	message string
	// policies are the governing policies with a status, which list the held pod; maxHold is
	// theirs (zero: never), for the holds held longer than it.
	policies []rules.PolicyKey
	maxHold  time.Duration
}

// instances is the one store of what the decision remembers per pod and container instance,
// indexed so that an event finds the pods to decide again: byWorkload holds the pods with a held
// or waiting instance, byNode and byNamespace those with a held one.
type instances struct {
	byPod map[types.NamespacedName]map[rules.Instance]*instance

	byWorkload  map[rules.WorkloadKey]map[types.NamespacedName]struct{}
	byNode      map[string]map[types.NamespacedName]struct{}
	byNamespace map[string]map[types.NamespacedName]struct{}
}

func newInstances() *instances {
	return &instances{
		byPod:       map[types.NamespacedName]map[rules.Instance]*instance{},
		byWorkload:  map[rules.WorkloadKey]map[types.NamespacedName]struct{}{},
		byNode:      map[string]map[types.NamespacedName]struct{}{},
		byNamespace: map[string]map[types.NamespacedName]struct{}{},
	}
}

func (s *instances) get(pod types.NamespacedName, inst rules.Instance) *instance {
	return s.byPod[pod][inst]
}

// update changes the instance's entry (made when there is none) and keeps the indexes in step.
func (s *instances) update(pod types.NamespacedName, inst rules.Instance, change func(*instance)) {
	s.unindex(pod)
	m := s.byPod[pod]
	if m == nil {
		m = map[rules.Instance]*instance{}
		s.byPod[pod] = m
	}
	x := m[inst]
	if x == nil {
		x = &instance{}
		m[inst] = x
	}
	change(x)
	s.index(pod)
}

// held returns the instance's held restart.
func (s *instances) held(pod types.NamespacedName, inst rules.Instance) (rules.HeldRecord, bool) {
	x := s.get(pod, inst)
	if x == nil || x.hold == nil {
		return rules.HeldRecord{}, false
	}
	return rules.HeldRecord{Reason: x.hold.reason, Since: x.hold.since, Announced: x.hold.announced}, true
}

// firstSeenOf returns when a decision first saw the instance's failure.
func (s *instances) firstSeenOf(pod types.NamespacedName, inst rules.Instance) (time.Time, bool) {
	x := s.get(pod, inst)
	if x == nil || x.firstSeen.IsZero() {
		return time.Time{}, false
	}
	return x.firstSeen, true
}

// retain keeps what is remembered of the pod's instances for which keep is true (those still
// failing), and forgets the others.
func (s *instances) retain(pod types.NamespacedName, keep func(rules.Instance) bool) {
	if _, ok := s.byPod[pod]; !ok {
		return
	}
	s.unindex(pod)
	for inst := range s.byPod[pod] {
		if !keep(inst) {
			delete(s.byPod[pod], inst)
		}
	}
	if len(s.byPod[pod]) == 0 {
		delete(s.byPod, pod)
	}
	s.index(pod)
}

// forget drops everything remembered of a pod that is gone.
func (s *instances) forget(pod types.NamespacedName) {
	s.retain(pod, func(rules.Instance) bool { return false })
}

// inWorkload returns the pods with a held or waiting instance in workload w.
func (s *instances) inWorkload(w rules.WorkloadKey) []types.NamespacedName {
	return keys(s.byWorkload[w])
}

// heldOnNode returns the pods with a held instance on node n.
func (s *instances) heldOnNode(n string) []types.NamespacedName { return keys(s.byNode[n]) }

// heldInNamespace returns the pods with a held instance in namespace ns.
func (s *instances) heldInNamespace(ns string) []types.NamespacedName {
	return keys(s.byNamespace[ns])
}

// holds calls each for every held instance.
func (s *instances) holds(each func(pod types.NamespacedName, inst rules.Instance, x *instance)) {
	for pod, m := range s.byPod {
		for inst, x := range m {
			if x.hold != nil {
				each(pod, inst, x)
			}
		}
	}
}

// reasons returns the current hold reason of each workload with held pods: the first in
// decision order when its pods are held for several.
func (s *instances) reasons() map[rules.WorkloadKey]policyv1alpha1.HoldReason {
	out := map[rules.WorkloadKey]policyv1alpha1.HoldReason{}
	s.holds(func(_ types.NamespacedName, _ rules.Instance, x *instance) {
		if cur, ok := out[x.workload]; !ok || rank(x.hold.reason) < rank(cur) {
			out[x.workload] = x.hold.reason
		}
	})
	return out
}

// heldFor counts, per workload, the pods with a restart held for reason.
func (s *instances) heldFor(reason policyv1alpha1.HoldReason) map[rules.WorkloadKey]int {
	out := map[rules.WorkloadKey]int{}
	for _, m := range s.byPod {
		for _, x := range m {
			if x.hold != nil && x.hold.reason == reason {
				out[x.workload]++
				break
			}
		}
	}
	return out
}

func rank(r policyv1alpha1.HoldReason) int { return slices.Index(policyv1alpha1.HoldReasons, r) }

// index and unindex keep the indexes in step with byPod[pod].
func (s *instances) index(pod types.NamespacedName) {
	for _, x := range s.byPod[pod] {
		if x.pending() {
			add(s.byWorkload, x.workload, pod)
		}
		if x.hold != nil {
			add(s.byNode, x.node, pod)
			add(s.byNamespace, pod.Namespace, pod)
		}
	}
}

func (s *instances) unindex(pod types.NamespacedName) {
	for _, x := range s.byPod[pod] {
		remove(s.byWorkload, x.workload, pod)
		remove(s.byNode, x.node, pod)
		remove(s.byNamespace, pod.Namespace, pod)
	}
}

func add[K comparable](m map[K]map[types.NamespacedName]struct{}, k K, pod types.NamespacedName) {
	if m[k] == nil {
		m[k] = map[types.NamespacedName]struct{}{}
	}
	m[k][pod] = struct{}{}
}

func remove[K comparable](m map[K]map[types.NamespacedName]struct{}, k K, pod types.NamespacedName) {
	delete(m[k], pod)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}

func keys(m map[types.NamespacedName]struct{}) []types.NamespacedName {
	out := make([]types.NamespacedName, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// keysOf returns the keys of the pod's remembered instances.
func (s *instances) keysOf(pod types.NamespacedName) []rules.HoldKey {
	var keys []rules.HoldKey
	for inst, x := range s.byPod[pod] {
		if k := (rules.HoldKey{Workload: x.workload, Container: inst.Container}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// heldIn reports whether an instance of the key is held for a doubt or the budget.
func (s *instances) heldIn(k rules.HoldKey) bool {
	for pod := range s.byWorkload[k.Workload] {
		for inst, x := range s.byPod[pod] {
			if inst.Container == k.Container && x.workload == k.Workload && x.heldNotByChoice() {
				return true
			}
		}
	}
	return false
}

func (x *instance) heldNotByChoice() bool {
	return x.hold != nil && x.hold.reason.Kind() != policyv1alpha1.HoldKindChoice
}
