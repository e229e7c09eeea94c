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

package restarts

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

// Instance is one container instance of a pod: decisions are made, and holds recorded, per
// instance, so that a new container after a restart starts with a clean slate.
type Instance struct {
	Container, ContainerID string
}

// Hold is a restart the decision controller holds, with what the watches need to wake the pod
// again: its workload and node, and the policies that counted it.
type Hold struct {
	Reason   protection.Reason
	Workload protection.WorkloadKey
	Node     string
	Policies []protection.PolicyKey
}

// Holds records the held restarts per pod and container instance, indexed by workload, node and
// namespace so that an event on any of them finds the pods to decide again.
type Holds struct {
	mu    sync.Mutex
	byPod map[types.NamespacedName]map[Instance]Hold

	byWorkload  map[protection.WorkloadKey]map[types.NamespacedName]struct{}
	byNode      map[string]map[types.NamespacedName]struct{}
	byNamespace map[string]map[types.NamespacedName]struct{}
}

// NewHolds returns an empty index.
func NewHolds() *Holds {
	return &Holds{
		byPod:       map[types.NamespacedName]map[Instance]Hold{},
		byWorkload:  map[protection.WorkloadKey]map[types.NamespacedName]struct{}{},
		byNode:      map[string]map[types.NamespacedName]struct{}{},
		byNamespace: map[string]map[types.NamespacedName]struct{}{},
	}
}

// Record remembers the hold of an instance and reports whether it is a transition (a new instance
// or a new reason) that must be recorded as an event and counted.
func (h *Holds) Record(pod types.NamespacedName, inst Instance, hold Hold) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unindex(pod)
	m := h.byPod[pod]
	if m == nil {
		m = map[Instance]Hold{}
		h.byPod[pod] = m
	}
	prev, ok := m[inst]
	m[inst] = hold
	h.index(pod)
	return !ok || prev.Reason != hold.Reason
}

// Held reports whether the instance's restart is held.
func (h *Holds) Held(pod types.NamespacedName, inst Instance) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.byPod[pod][inst]
	return ok
}

// Release forgets the hold of an instance whose restart was requested.
func (h *Holds) Release(pod types.NamespacedName, inst Instance) {
	h.Retain(pod, func(i Instance) bool { return i != inst })
}

// Retain keeps the pod's holds of the instances for which keep is true (those still failing).
func (h *Holds) Retain(pod types.NamespacedName, keep func(Instance) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
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

// Forget drops every hold of a pod that is gone.
func (h *Holds) Forget(pod types.NamespacedName) {
	h.Retain(pod, func(Instance) bool { return false })
}

// InWorkload returns the pods with a hold in workload w.
func (h *Holds) InWorkload(w protection.WorkloadKey) []types.NamespacedName {
	h.mu.Lock()
	defer h.mu.Unlock()
	return keys(h.byWorkload[w])
}

// OnNode returns the pods with a hold on node n.
func (h *Holds) OnNode(n string) []types.NamespacedName {
	h.mu.Lock()
	defer h.mu.Unlock()
	return keys(h.byNode[n])
}

// InNamespace returns the pods with a hold in namespace ns.
func (h *Holds) InNamespace(ns string) []types.NamespacedName {
	h.mu.Lock()
	defer h.mu.Unlock()
	return keys(h.byNamespace[ns])
}

// Reasons returns the current hold reason of each workload with held pods: the first in decision
// order when its pods are held for several.
func (h *Holds) Reasons() map[protection.WorkloadKey]protection.Reason {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[protection.WorkloadKey]protection.Reason{}
	for _, m := range h.byPod {
		for _, hold := range m {
			if cur, ok := out[hold.Workload]; !ok || rank(hold.Reason) < rank(cur) {
				out[hold.Workload] = hold.Reason
			}
		}
	}
	return out
}

// HeldFor counts, per workload, the pods with a restart held for reason.
func (h *Holds) HeldFor(reason protection.Reason) map[protection.WorkloadKey]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[protection.WorkloadKey]int{}
	for _, m := range h.byPod {
		for _, hold := range m {
			if hold.Reason == reason {
				out[hold.Workload]++
				break
			}
		}
	}
	return out
}

func rank(r protection.Reason) int { return slices.Index(protection.AllReasons, r) }

// index and unindex keep the secondary indexes in step with byPod[pod]; callers hold mu.
func (h *Holds) index(pod types.NamespacedName) {
	for _, hold := range h.byPod[pod] {
		add(h.byWorkload, hold.Workload, pod)
		add(h.byNode, hold.Node, pod)
		add(h.byNamespace, pod.Namespace, pod)
	}
}

func (h *Holds) unindex(pod types.NamespacedName) {
	for _, hold := range h.byPod[pod] {
		remove(h.byWorkload, hold.Workload, pod)
		remove(h.byNode, hold.Node, pod)
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
