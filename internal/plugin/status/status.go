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

// Package status summarises what the operator holds now in one namespace or in all: the
// policies and their modes, the restarts held now by reason and since when, the RestartHolds and
// their canaries, what enrolling avoided and cost, the enrolled containers no daemon probes and
// why, and (to a reader who may see them) the nodes whose daemon does not report and the nodes
// with the storm condition. It is pure: Build reads only the objects it is given.
package status

import (
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/nodecondition"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/plugin/explain"
)

// notProbedEventAge is how long a LivenessNotProbed event stands for a pod still not probed: the
// manager repeats it every 5 minutes while it lasts.
const notProbedEventAge = 6 * time.Minute

// Inputs are the objects status reads.
type Inputs struct {
	// Scope is the namespace read, or "" for all namespaces.
	Scope    string
	Policies []policyv1alpha1.EnhancedLivenessPolicy
	Holds    []policyv1alpha1.RestartHold
	// Events are the LivenessNotProbed events of the scope.
	Events []corev1.Event
	// Nodes and Leases (the daemons' Leases) are read only for all namespaces; nil when not read.
	Nodes  []corev1.Node
	Leases []coordinationv1.Lease
	Notes  []string
	Now    time.Time
}

// Status is what status says. Its JSON form is the plugin's `-o json` output.
type Status struct {
	Scope    string     `json:"scope"`
	Policies []Policy   `json:"policies"`
	Held     []HeldPod  `json:"held,omitempty"`
	Holds    []Hold     `json:"holds,omitempty"`
	Unprobed []Unprobed `json:"unprobed,omitempty"`
	// Nodes are the nodes with something to say: the storm condition, or a daemon not reporting.
	Nodes []Node   `json:"nodes,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// Policy is one policy's counts now, and its figures.
type Policy struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Mode      string `json:"mode"`
	Enrolled  int32  `json:"enrolledPods"`
	Shadow    int32  `json:"shadowPods"`
	Failing   int32  `json:"failingContainers"`
	Unprobed  int32  `json:"unprobedContainers"`
	// HeldNow is status.heldPodsTotal; HeldByReason counts the listed held pods (at most 50).
	HeldNow      int32            `json:"heldNow"`
	HeldByReason map[string]int32 `json:"heldByReason,omitempty"`
	OldestHold   *time.Time       `json:"oldestHold,omitempty"`
	Avoided      int32            `json:"avoided"`
	Agreed       int32            `json:"agreed"`
	AddedMax     int32            `json:"addedMaxSeconds"`
	FiguresSince *time.Time       `json:"figuresSince,omitempty"`
}

// HeldPod is a restart held now; Message is why, in the words of the decision that began the
// hold (status.heldPods[].message).
type HeldPod struct {
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	Container string    `json:"container"`
	Reason    string    `json:"reason"`
	Since     time.Time `json:"since"`
	Message   string    `json:"message,omitempty"`
}

// Hold is a RestartHold: a workload's doubt hold of a container.
type Hold struct {
	Namespace  string     `json:"namespace"`
	Name       string     `json:"name"`
	Workload   string     `json:"workload"`
	Container  string     `json:"container"`
	Reason     string     `json:"reason"`
	Onset      time.Time  `json:"onset"`
	Canaries   int32      `json:"canaries"`
	NextCanary *time.Time `json:"nextCanary,omitempty"`
	Canary     string     `json:"canary,omitempty"`
}

// Unprobed is an enrolled pod whose containers no daemon probes, as its last LivenessNotProbed
// event says.
type Unprobed struct {
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	Why       string    `json:"why"`
	Message   string    `json:"message"`
	Seen      time.Time `json:"seen"`
}

// Node is a node with the storm condition or whose daemon does not report.
type Node struct {
	Name string `json:"name"`
	// Storm is the EnhancedLivenessNodeStorm condition's reason and message when it is True.
	Storm        string     `json:"storm,omitempty"`
	StormMessage string     `json:"stormMessage,omitempty"`
	DaemonLease  string     `json:"daemonLease,omitempty"`
	LeaseRenewed *time.Time `json:"leaseRenewed,omitempty"`
}

// Build summarises in.
func Build(in Inputs) Status {
	s := Status{Scope: in.Scope, Notes: slices.Clone(in.Notes)}
	if s.Scope == "" {
		s.Scope = "all namespaces"
	}
	for i := range in.Policies {
		p := &in.Policies[i]
		s.Policies = append(s.Policies, policy(p))
		for _, h := range p.Status.HeldPods {
			s.Held = append(s.Held, HeldPod{Namespace: p.Namespace, Pod: h.Pod, Container: h.Container, Reason: string(h.Reason),
				Since: h.Since.Time, Message: h.Message})
		}
	}
	s.Held = unique(s.Held)
	for i := range in.Holds {
		if h := hold(&in.Holds[i]); h != nil {
			s.Holds = append(s.Holds, *h)
		}
	}
	s.Unprobed = unprobed(in.Events, in.Now)
	if in.Nodes != nil {
		s.Nodes = nodes(in.Nodes, in.Leases, in.Now)
	}
	return s
}

func policy(p *policyv1alpha1.EnhancedLivenessPolicy) Policy {
	st := &p.Status
	out := Policy{Namespace: p.Namespace, Name: p.Name, Mode: string(p.Spec.Mode), Enrolled: st.EnrolledPods, Shadow: st.ShadowPods,
		Failing: st.FailingContainers, Unprobed: st.UnprobedContainers, HeldNow: st.HeldPodsTotal}
	if out.Mode == "" {
		out.Mode = string(policyv1alpha1.ModeEnforce)
	}
	for _, h := range st.HeldPods {
		if out.HeldByReason == nil {
			out.HeldByReason = map[string]int32{}
		}
		out.HeldByReason[string(h.Reason)]++
		if out.OldestHold == nil || h.Since.Time.Before(*out.OldestHold) {
			t := h.Since.Time
			out.OldestHold = &t
		}
	}
	if f := st.Figures; f != nil {
		t := f.WindowStart.Time
		out.FiguresSince = &t
		for _, w := range f.Workloads {
			out.Avoided += w.Avoided
			out.Agreed += w.Agreed
			out.AddedMax = max(out.AddedMax, w.AddedMaxSeconds)
		}
	}
	return out
}

// unique drops a held pod that two policies list, oldest hold first.
func unique(held []HeldPod) []HeldPod {
	slices.SortStableFunc(held, func(a, b HeldPod) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace+"/"+a.Pod+"/"+a.Container, b.Namespace+"/"+b.Pod+"/"+b.Container)
	})
	return slices.CompactFunc(held, func(a, b HeldPod) bool {
		return a.Namespace == b.Namespace && a.Pod == b.Pod && a.Container == b.Container
	})
}

// hold is a RestartHold that still holds (not released).
func hold(h *policyv1alpha1.RestartHold) *Hold {
	st := &h.Status
	if st.ReleasedAt != nil {
		return nil
	}
	out := &Hold{Namespace: h.Namespace, Name: h.Name, Workload: st.Workload.Kind + " " + st.Workload.Name, Container: st.Container,
		Reason: st.Reason, Onset: st.Onset.Time, Canaries: st.Canaries}
	if st.NextCanary != nil {
		t := st.NextCanary.Time
		out.NextCanary = &t
	}
	if k := st.Canary; k != nil {
		out.Canary = k.Pod
	}
	return out
}

func unprobed(events []corev1.Event, now time.Time) []Unprobed {
	latest := map[string]Unprobed{}
	for _, e := range events {
		if e.Reason != "LivenessNotProbed" || e.InvolvedObject.Kind != "Pod" {
			continue
		}
		u := Unprobed{Namespace: e.InvolvedObject.Namespace, Pod: e.InvolvedObject.Name, Why: e.Action, Message: e.Message, Seen: explain.EventTime(e)}
		if now.Sub(u.Seen) > notProbedEventAge {
			continue
		}
		k := u.Namespace + "/" + u.Pod
		if old, ok := latest[k]; !ok || u.Seen.After(old.Seen) {
			latest[k] = u
		}
	}
	out := make([]Unprobed, 0, len(latest))
	for _, u := range latest {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b Unprobed) int { return strings.Compare(a.Namespace+"/"+a.Pod, b.Namespace+"/"+b.Pod) })
	return out
}

// nodes are the nodes with the storm condition True, and those whose daemon's Lease is missing or
// expired (among nodes that have had one: a node the daemon does not run on has none).
func nodes(all []corev1.Node, leases []coordinationv1.Lease, now time.Time) []Node {
	byName := map[string]*coordinationv1.Lease{}
	for i := range leases {
		byName[leases[i].Name] = &leases[i]
	}
	var out []Node
	for i := range all {
		n := &all[i]
		x := Node{Name: n.Name}
		for _, c := range n.Status.Conditions {
			if c.Type == nodecondition.Type && c.Status == corev1.ConditionTrue {
				x.Storm, x.StormMessage = c.Reason, c.Message
			}
		}
		if l := byName[appsv1alpha1.DaemonLeasePrefix+n.Name]; l != nil && expired(l, now) {
			x.DaemonLease = l.Name
			if l.Spec.RenewTime != nil {
				t := l.Spec.RenewTime.Time
				x.LeaseRenewed = &t
			}
		}
		if x.Storm != "" || x.DaemonLease != "" {
			out = append(out, x)
		}
	}
	return out
}

func expired(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return now.After(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}
