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

// hold is a restart the decision holds, with what the watches need to wake the pod again: its
// workload and node.
type hold struct {
	reason   policyv1alpha1.HoldReason
	workload rules.WorkloadKey
	node     string
	// since it is held for reason and when an event last told it (rules.HeldRecord).
	since, announced time.Time
	// policies are the governing policies with a status, which list the held pod; maxHold is
	// theirs (zero: never), for the holds held longer than it.
	policies []rules.PolicyKey
	maxHold  time.Duration
}

// holds records the held restarts per pod and container instance, indexed by workload, node and
// namespace so that an event on any of them finds the pods to decide again.
type holds struct {
	byPod map[types.NamespacedName]map[rules.Instance]hold

	byWorkload  map[rules.WorkloadKey]map[types.NamespacedName]struct{}
	byNode      map[string]map[types.NamespacedName]struct{}
	byNamespace map[string]map[types.NamespacedName]struct{}
}

func newHolds() *holds {
	return &holds{
		byPod:       map[types.NamespacedName]map[rules.Instance]hold{},
		byWorkload:  map[rules.WorkloadKey]map[types.NamespacedName]struct{}{},
		byNode:      map[string]map[types.NamespacedName]struct{}{},
		byNamespace: map[string]map[types.NamespacedName]struct{}{},
	}
}

// record remembers the hold of an instance, replacing an earlier one.
func (h *holds) record(pod types.NamespacedName, inst rules.Instance, x hold) {
	h.unindex(pod)
	m := h.byPod[pod]
	if m == nil {
		m = map[rules.Instance]hold{}
		h.byPod[pod] = m
	}
	m[inst] = x
	h.index(pod)
}

// held returns the instance's held restart.
func (h *holds) held(pod types.NamespacedName, inst rules.Instance) (rules.HeldRecord, bool) {
	x, ok := h.byPod[pod][inst]
	return rules.HeldRecord{Reason: x.reason, Since: x.since, Announced: x.announced}, ok
}

// release forgets the hold of an instance whose restart was requested.
func (h *holds) release(pod types.NamespacedName, inst rules.Instance) {
	h.retain(pod, func(i rules.Instance) bool { return i != inst })
}

// retain keeps the pod's holds of the instances for which keep is true (those still failing).
func (h *holds) retain(pod types.NamespacedName, keep func(rules.Instance) bool) {
	h.unindex(pod)
	for inst := range h.byPod[pod] {
		if !keep(inst) {
			delete(h.byPod[pod], inst)
		}
	}
	if len(h.byPod[pod]) == 0 {
		delete(h.byPod, pod)
	}
	h.index(pod)
}

// forget drops every hold of a pod that is gone.
func (h *holds) forget(pod types.NamespacedName) {
	h.retain(pod, func(rules.Instance) bool { return false })
}

// inWorkload returns the pods with a hold in workload w.
func (h *holds) inWorkload(w rules.WorkloadKey) []types.NamespacedName { return keys(h.byWorkload[w]) }

// onNode returns the pods with a hold on node n.
func (h *holds) onNode(n string) []types.NamespacedName { return keys(h.byNode[n]) }

// inNamespace returns the pods with a hold in namespace ns.
func (h *holds) inNamespace(ns string) []types.NamespacedName { return keys(h.byNamespace[ns]) }

// reasons returns the current hold reason of each workload with held pods: the first in
// decision order when its pods are held for several.
func (h *holds) reasons() map[rules.WorkloadKey]policyv1alpha1.HoldReason {
	out := map[rules.WorkloadKey]policyv1alpha1.HoldReason{}
	for _, m := range h.byPod {
		for _, x := range m {
			if cur, ok := out[x.workload]; !ok || rank(x.reason) < rank(cur) {
				out[x.workload] = x.reason
			}
		}
	}
	return out
}

// heldFor counts, per workload, the pods with a restart held for reason.
func (h *holds) heldFor(reason policyv1alpha1.HoldReason) map[rules.WorkloadKey]int {
	out := map[rules.WorkloadKey]int{}
	for _, m := range h.byPod {
		for _, x := range m {
			if x.reason == reason {
				out[x.workload]++
				break
			}
		}
	}
	return out
}

func rank(r policyv1alpha1.HoldReason) int { return slices.Index(policyv1alpha1.HoldReasons, r) }

// index and unindex keep the secondary indexes in step with byPod[pod].
func (h *holds) index(pod types.NamespacedName) {
	for _, x := range h.byPod[pod] {
		add(h.byWorkload, x.workload, pod)
		add(h.byNode, x.node, pod)
		add(h.byNamespace, pod.Namespace, pod)
	}
}

func (h *holds) unindex(pod types.NamespacedName) {
	for _, x := range h.byPod[pod] {
		remove(h.byWorkload, x.workload, pod)
		remove(h.byNode, x.node, pod)
		remove(h.byNamespace, pod.Namespace, pod)
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
