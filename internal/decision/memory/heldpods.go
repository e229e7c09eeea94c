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
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// HeldPod is one held restart, as the policy status lists it.
type HeldPod struct {
	Pod       types.NamespacedName
	Container string
	Reason    policyv1alpha1.HoldReason
	// Since is when it began to be held for Reason, on the manager's clock.
	Since time.Time
	// Workload is the pod's workload.
	Workload rules.WorkloadKey
	// Message is the decision's message when the hold began for Reason (its RestartHeld
	// event's); empty for a canary in flight (HeldFor), which no decision holds.
	Message string
}

// governedBy returns the held restarts of the pods policy governs, oldest first.
func (s *instances) governedBy(policy rules.PolicyKey) []HeldPod {
	var out []HeldPod
	s.holds(func(pod types.NamespacedName, inst rules.Instance, x *instance) {
		if slices.Contains(x.hold.policies, policy) {
			out = append(out, heldPod(pod, inst, x))
		}
	})
	sortHeld(out)
	return out
}

func heldPod(pod types.NamespacedName, inst rules.Instance, x *instance) HeldPod {
	return HeldPod{Pod: pod, Container: inst.Container, Reason: x.hold.reason, Since: x.hold.since, Workload: x.workload,
		Message: x.hold.message}
}

// sortHeld orders held restarts oldest first.
func sortHeld(held []HeldPod) {
	slices.SortFunc(held, func(a, b HeldPod) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Pod.Namespace, b.Pod.Namespace),
			cmp.Compare(a.Pod.Name, b.Pod.Name), cmp.Compare(a.Container, b.Container))
	})
}

// HeldFor returns the restarts held for reason now, oldest first, with the canaries in flight of
// the holds of that reason (since the hold's onset): a canary is the held storm's test, not its
// end. The node condition controller reads the NodeStorm holds.
func (m *Memory) HeldFor(reason policyv1alpha1.HoldReason) []HeldPod {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []HeldPod
	seen := map[HeldPod]bool{}
	m.instances.holds(func(pod types.NamespacedName, inst rules.Instance, x *instance) {
		if x.hold.reason == reason {
			out = append(out, heldPod(pod, inst, x))
			seen[HeldPod{Pod: pod, Container: inst.Container}] = true
		}
	})
	for k, r := range m.holds.byKey {
		c := r.Hold.Canary
		if r.Hold.Reason != reason || c == nil {
			continue
		}
		pod := types.NamespacedName{Namespace: k.Workload.Namespace, Name: c.PodName}
		if !seen[HeldPod{Pod: pod, Container: c.Container}] {
			out = append(out, HeldPod{Pod: pod, Container: c.Container, Reason: reason, Since: r.Hold.Onset, Workload: k.Workload})
		}
	}
	sortHeld(out)
	return out
}

// HoldStats is what the metrics show of the held restarts.
type HoldStats struct {
	// Pods counts, per reason, the pods with a restart held for it.
	Pods map[policyv1alpha1.HoldReason]int
	// Oldest is, per reason, how long the oldest restart held for it has been held.
	Oldest map[policyv1alpha1.HoldReason]time.Duration
	// OverMaxHold counts the held restarts held longer than their maxHold: budget and doubt
	// holds (a canary and its doubled periods aside, those should end within it), not the
	// holds chosen by a switch, Shadow or the blacklist, nor those of a policy with maxHold 0s.
	OverMaxHold int
}

// HoldStats returns what the metrics show of the held restarts now.
func (m *Memory) HoldStats() HoldStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	s := HoldStats{Pods: map[policyv1alpha1.HoldReason]int{}, Oldest: map[policyv1alpha1.HoldReason]time.Duration{}}
	for _, byInst := range m.instances.byPod {
		counted := map[policyv1alpha1.HoldReason]bool{}
		for _, i := range byInst {
			x := i.hold
			if x == nil {
				continue
			}
			if !counted[x.reason] {
				s.Pods[x.reason]++
				counted[x.reason] = true
			}
			age := max(0, now.Sub(x.since))
			s.Oldest[x.reason] = max(s.Oldest[x.reason], age)
			if x.maxHold > 0 && age > x.maxHold && x.reason.Kind() != policyv1alpha1.HoldKindChoice {
				s.OverMaxHold++
			}
		}
	}
	return s
}
