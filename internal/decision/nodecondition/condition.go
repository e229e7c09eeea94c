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

// Package nodecondition judges the Node condition the manager sets on a node where its evidence
// says the node, not the apps, is sick, so that node remediation (NodeHealthCheck,
// MachineHealthCheck), which acts on Node conditions only, can act on what the pods' probes see.
// It is pure: the controller gives it the restarts the decision holds on each node, how their
// workloads fare on the other nodes, and how many nodes have a reporting daemon.
package nodecondition

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Type is the Node condition: True while the restarts held on the node say the node is sick
// (Judge), on no more nodes at once than Limit allows. It is set False, not removed, when that
// ends: remediation matches type and status, and the False condition keeps when it ended.
const Type corev1.NodeConditionType = "EnhancedLivenessNodeStorm"

// Reasons of the condition.
const (
	// ReasonHeld: restarts of enrolled containers of several namespaces are held NodeStorm on the
	// node while their workloads' pods on other nodes pass.
	ReasonHeld = "NodeStormHeld"
	// ReasonIneffective: restarts did not help on the node for workloads of several namespaces
	// (held RestartIneffective there) while those workloads' pods on other nodes pass.
	ReasonIneffective = "RestartsIneffective"
	// ReasonNone: no such evidence is held on the node (any more).
	ReasonNone = "NoNodeStorm"
	// ReasonWithheld: the node has the evidence, but so do more nodes than Limit allows at once:
	// a cause they share is likelier than that many sick nodes.
	ReasonWithheld = "TooManyNodes"
	// ReasonNotJudged: the manager that set the condition stopped; none judges the node now.
	ReasonNotJudged = "NotJudged"
)

const (
	// MinNamespaces is how many namespaces a node storm must span to be blamed on the node: one
	// tenant's failures, however many, are that tenant's. A node storm also needs more than
	// --node-storm-max-failing of the node's enrolled pods failing.
	MinNamespaces = 2
	// MinIneffectiveNamespaces is how many namespaces the workloads whose restarts did not help on
	// the node must span. Nothing else bounds this evidence by the node's size, so it takes one
	// more namespace than a node storm: a user of one or two namespaces can never set it alone.
	MinIneffectiveNamespaces = 3
	// MaxNodesPercent of the nodes with a reporting daemon (rounded down, at least one) may carry
	// the condition at once (Limit).
	MaxNodesPercent = 10
	// Heartbeat is how often a True condition's lastHeartbeatTime is renewed while it is judged
	// True again and again; an older heartbeat means no manager judges it any more.
	Heartbeat = time.Minute
	// ConfirmFor is how long a node's verdict must stay True before the condition is set (Confirm).
	ConfirmFor = 20 * time.Second
	// maxListed bounds the workloads a message names.
	maxListed = 10
)

// Held is one pod whose restart the decision holds on the node, NodeStorm or RestartIneffective.
type Held struct {
	Namespace, Pod string
	Reason         policyv1alpha1.HoldReason
	// Workload names the pod's workload in its namespace ("Kind/name"). PassingElsewhere and
	// FailingElsewhere count its pods on other nodes whose probe of the held container passes,
	// or fails (or has started to fail), as their reporting daemons say.
	Workload                           string
	PassingElsewhere, FailingElsewhere int
	// Since is when the restart began to be held for Reason.
	Since time.Time
}

// passesElsewhere: the held workload is evidence against the node only if it passes on other
// nodes, and fails there in fewer pods than pass: an app failing on many nodes at once is at
// fault itself, or a dependency its nodes share is, and remediating nodes would not help.
func (h Held) passesElsewhere() bool {
	return h.PassingElsewhere > 0 && h.FailingElsewhere < h.PassingElsewhere
}

// Verdict is the condition's status, reason and message for a node.
type Verdict struct {
	Status  corev1.ConditionStatus
	Reason  string
	Message string
}

// Judge says what the condition of node is, from the pods held there. Only pods whose workloads
// pass elsewhere count. The node is sick when the counted NodeStorm holds span MinNamespaces
// namespaces, or the counted RestartIneffective holds span MinIneffectiveNamespaces.
func Judge(node string, held []Held) Verdict {
	if e := tally(held, policyv1alpha1.HoldNodeStorm); len(e.pods) >= MinNamespaces {
		return Verdict{Status: corev1.ConditionTrue, Reason: ReasonHeld, Message: fmt.Sprintf(
			"restarts of %d pods of %d workloads in %d namespaces (%s) are held NodeStorm on node %s since %s while their workloads pass on other nodes",
			e.count(), len(e.workloads), len(e.pods), e.perNamespace(), node, e.since.UTC().Format(time.RFC3339))}
	}
	if e := tally(held, policyv1alpha1.HoldRestartIneffective); len(e.pods) >= MinIneffectiveNamespaces {
		return Verdict{Status: corev1.ConditionTrue, Reason: ReasonIneffective, Message: fmt.Sprintf(
			"restarts did not help on node %s for %d pods of %d workloads in %d namespaces (%s), held RestartIneffective since %s, while those workloads pass on other nodes",
			node, e.count(), len(e.workloads), len(e.pods), e.listWorkloads(), e.since.UTC().Format(time.RFC3339))}
	}
	return Verdict{Status: corev1.ConditionFalse, Reason: ReasonNone, Message: fmt.Sprintf(
		"no restarts held on node %s NodeStorm in %d or more namespaces, nor RestartIneffective in %d or more, for workloads that pass on other nodes",
		node, MinNamespaces, MinIneffectiveNamespaces)}
}

// evidence is what the held pods of one reason say against a node.
type evidence struct {
	pods      map[string]int  // namespace → counted pods
	workloads map[string]bool // "namespace/Kind/name"
	since     time.Time
}

func tally(held []Held, reason policyv1alpha1.HoldReason) evidence {
	e := evidence{pods: map[string]int{}, workloads: map[string]bool{}}
	for _, h := range held {
		if h.Reason != reason || !h.passesElsewhere() {
			continue
		}
		e.pods[h.Namespace]++
		e.workloads[h.Namespace+"/"+h.Workload] = true
		if e.since.IsZero() || h.Since.Before(e.since) {
			e.since = h.Since
		}
	}
	return e
}

func (e evidence) count() int {
	n := 0
	for _, c := range e.pods {
		n += c
	}
	return n
}

// perNamespace is "a: 1, b: 2".
func (e evidence) perNamespace() string {
	out := make([]string, 0, len(e.pods))
	for _, ns := range slices.Sorted(maps.Keys(e.pods)) {
		out = append(out, fmt.Sprintf("%s: %d", ns, e.pods[ns]))
	}
	return strings.Join(out, ", ")
}

// listWorkloads is "a/Deployment/x, b/Deployment/y", at most maxListed, then how many more.
func (e evidence) listWorkloads() string {
	all := slices.Sorted(maps.Keys(e.workloads))
	if len(all) <= maxListed {
		return strings.Join(all, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(all[:maxListed], ", "), len(all)-maxListed)
}

// Limit is how many nodes may carry the condition True at once, given how many nodes have a
// reporting daemon: MaxNodesPercent of them, rounded down, and at least one.
func Limit(daemons int) int {
	return max(1, daemons*MaxNodesPercent/100)
}

// Cap withholds the condition from every node when more nodes have a True verdict than
// Limit(daemons) allows: the verdicts of those nodes become False, reason ReasonWithheld. It
// returns the nodes withheld, sorted, or none. None keeps it rather than the strongest: evidence
// on that many nodes at once points at something they share (a zone, storage, a dependency, a
// rollout), and remediating the nodes would take capacity away while it lasts; and no tenant can
// displace a sick node's condition with stronger evidence of its own on others.
func Cap(verdicts map[string]Verdict, daemons int) []string {
	var sick []string
	for node, v := range verdicts {
		if v.Status == corev1.ConditionTrue {
			sick = append(sick, node)
		}
	}
	limit := Limit(daemons)
	if len(sick) <= limit {
		return nil
	}
	slices.Sort(sick)
	for _, node := range sick {
		verdicts[node] = Verdict{Status: corev1.ConditionFalse, Reason: ReasonWithheld, Message: fmt.Sprintf(
			"withheld: %d nodes have the evidence at once, more than %d (%d%% of the %d nodes with a reporting daemon, at least 1), so a cause they share is likelier than a sick node; on this node: %s",
			len(sick), limit, MaxNodesPercent, daemons, verdicts[node].Message)}
	}
	return sick
}

// Confirm keeps a node's True verdict back until the node has had one for confirm, counted from
// the first judgement in pending: the same failure reaches several nodes seconds apart (a rollout,
// a shared dependency), and the cap (Cap, run before) must see them together rather than blame
// the node it reached first. It removes the verdicts to leave unwritten this time; a node whose
// condition is True already (isTrue) is never delayed, and a node whose verdict is no longer True
// forgets when it began.
func Confirm(verdicts map[string]Verdict, pending map[string]time.Time, isTrue func(node string) bool,
	now time.Time, confirm time.Duration) {
	for node := range pending {
		if v, ok := verdicts[node]; !ok || v.Status != corev1.ConditionTrue {
			delete(pending, node)
		}
	}
	for node, v := range verdicts {
		if v.Status != corev1.ConditionTrue || isTrue(node) {
			continue
		}
		since, ok := pending[node]
		if !ok {
			since, pending[node] = now, now
		}
		if now.Sub(since) < confirm {
			delete(verdicts, node)
		}
	}
}

// NotJudged is the verdict a manager that stops leading writes on the nodes it set True: none
// judges them until a manager leads again.
func NotJudged() Verdict {
	return Verdict{Status: corev1.ConditionFalse, Reason: ReasonNotJudged,
		Message: "no enhanced-liveness manager judges this node: the leader that set the condition stopped"}
}

// Stopped is the verdict `manager stop` writes, before an uninstall deletes the manager, on the
// nodes whose condition is still True: none judges them from now on.
func Stopped() Verdict {
	return Verdict{Status: corev1.ConditionFalse, Reason: ReasonNotJudged,
		Message: "no enhanced-liveness manager judges this node: the manager was stopped (manager stop, run before an uninstall)"}
}

// Next returns the condition to write for the verdict at now, given the node's conditions, and
// whether there is anything to write. A False verdict on a node that never had the condition
// writes nothing. The transition time moves only when the status does; the heartbeat whenever
// the condition is written, and a True condition judged the same is written again once its
// heartbeat is Heartbeat old, so that a recent heartbeat says a manager still judges it.
func Next(conds []corev1.NodeCondition, v Verdict, now time.Time) (corev1.NodeCondition, bool) {
	want := corev1.NodeCondition{Type: Type, Status: v.Status, Reason: v.Reason, Message: v.Message,
		LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
	i := slices.IndexFunc(conds, func(c corev1.NodeCondition) bool { return c.Type == Type })
	if i < 0 {
		return want, v.Status == corev1.ConditionTrue
	}
	c := conds[i]
	if c.Status == v.Status && c.Reason == v.Reason && c.Message == v.Message &&
		(v.Status != corev1.ConditionTrue || now.Sub(c.LastHeartbeatTime.Time) < Heartbeat) {
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
