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

// Package nodecondition judges the Node condition the manager sets while it holds a node storm on
// a node, so that node remediation (NodeHealthCheck, MachineHealthCheck), which acts on Node
// conditions only, can act on what the pods' probes see. It is pure: the controller gives it the
// restarts the decision holds NodeStorm on the node and how their workloads fare elsewhere.
package nodecondition

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Type is the Node condition: True while a node storm of MinNamespaces or more namespaces is held
// on the node and the held workloads pass on other nodes. It is set False, not removed, when the
// storm is over: remediation matches type and status, and the False condition keeps when it ended.
const Type corev1.NodeConditionType = "EnhancedLivenessNodeStorm"

// Reasons of the condition.
const (
	// ReasonHeld: restarts of enrolled containers of several namespaces are held NodeStorm on the
	// node while their workloads' pods on other nodes pass.
	ReasonHeld = "NodeStormHeld"
	// ReasonNone: no such storm is held on the node (any more).
	ReasonNone = "NoNodeStorm"
)

// MinNamespaces is how many namespaces a node storm must span to be blamed on the node: one
// tenant's failures, however many, are that tenant's.
const MinNamespaces = 2

// Held is one pod whose restart the decision holds NodeStorm on the node.
type Held struct {
	Namespace, Pod string
	// Workload names the pod's workload in its namespace ("Kind/name"); PassingElsewhere counts
	// its pods on other nodes whose probe of the held container passes.
	Workload         string
	PassingElsewhere int
	// Since is when the restart began to be held NodeStorm.
	Since time.Time
}

// Verdict is the condition's status, reason and message for a node.
type Verdict struct {
	Status  corev1.ConditionStatus
	Reason  string
	Message string
}

// Judge says what the condition of node is, from the pods held NodeStorm there. A held pod counts
// only when its workload passes on another node (the failure is where it is, not in the app); the
// node is sick when the counted pods span MinNamespaces namespaces or more.
func Judge(node string, held []Held) Verdict {
	pods := map[string]int{} // namespace → counted pods
	workloads := map[string]bool{}
	var since time.Time
	for _, h := range held {
		if h.PassingElsewhere < 1 {
			continue
		}
		pods[h.Namespace]++
		workloads[h.Namespace+"/"+h.Workload] = true
		if since.IsZero() || h.Since.Before(since) {
			since = h.Since
		}
	}
	if len(pods) < MinNamespaces {
		return Verdict{Status: corev1.ConditionFalse, Reason: ReasonNone, Message: fmt.Sprintf(
			"no node storm of %d or more namespaces whose workloads pass on other nodes is held on node %s", MinNamespaces, node)}
	}
	namespaces := make([]string, 0, len(pods))
	n := 0
	for ns, c := range pods {
		namespaces = append(namespaces, fmt.Sprintf("%s: %d", ns, c))
		n += c
	}
	slices.Sort(namespaces)
	return Verdict{Status: corev1.ConditionTrue, Reason: ReasonHeld, Message: fmt.Sprintf(
		"restarts of %d pods of %d workloads in %d namespaces (%s) are held NodeStorm on node %s since %s while their workloads pass on other nodes",
		n, len(workloads), len(pods), strings.Join(namespaces, ", "), node, since.UTC().Format(time.RFC3339))}
}

// Next returns the condition to write for the verdict at now, given the node's conditions, and
// whether there is anything to write. A False verdict on a node that never had the condition
// writes nothing. The transition time moves only when the status does; the heartbeat whenever
// the condition is written (it changes only with the verdict: the manager does not beat).
func Next(conds []corev1.NodeCondition, v Verdict, now time.Time) (corev1.NodeCondition, bool) {
	want := corev1.NodeCondition{Type: Type, Status: v.Status, Reason: v.Reason, Message: v.Message,
		LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
	i := slices.IndexFunc(conds, func(c corev1.NodeCondition) bool { return c.Type == Type })
	if i < 0 {
		return want, v.Status == corev1.ConditionTrue
	}
	c := conds[i]
	if c.Status == v.Status && c.Reason == v.Reason && c.Message == v.Message {
		return c, false
	}
	if c.Status == v.Status {
		want.LastTransitionTime = c.LastTransitionTime
	}
	return want, true
}

// IsTrue reports whether the conditions hold this condition True.
func IsTrue(conds []corev1.NodeCondition) bool {
	return slices.ContainsFunc(conds, func(c corev1.NodeCondition) bool {
		return c.Type == Type && c.Status == corev1.ConditionTrue
	})
}
