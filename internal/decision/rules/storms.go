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
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Step 5: failure storms. Many pods failing together point at a cause restarts cannot cure (a
// wrong probe, a shared dependency, a sick node), so their restarts are held until the storm has
// passed and settled. Failing and suspect pods count: a fleet-wide failure is held before its
// first pod reaches the failure threshold. A workload's storm is judged per container (the
// failed one's evidence only: judged.workload), a node's over its pods.

func storms(c *judged) (Verdict, bool) {
	w, by := &c.workload, c.maxFailingBy
	if w.Storm(c.maxFailing) {
		return hold(policyv1alpha1.HoldFailureStorm, "%d of %d pods of %s are failing%s, more than maxFailing %d (policy %s)",
			w.FailingPods()+w.countedSuspects(), w.Desired, w.Ref, startingToFail(w.countedSuspects()), c.maxFailing, by), true
	}
	maxFailingOf := func(n int32) int32 { m, _ := c.f.Policies.MaxFailing(n); return m }
	if bad, total, storm := w.RevisionStorm(maxFailingOf); storm {
		return hold(policyv1alpha1.HoldFailureStorm, "%d of the %d probed pods of %s, a revision of %s, are failing or starting to fail, more than maxFailing %d of them (policy %s)",
			bad, total, w.Revision, w.Ref, maxFailingOf(total), by), true
	}
	if unjudged, unproven := w.RevisionUnproven(); unproven {
		if limit := RevisionEvidenceWait(c.x.Period); c.failedFor < limit {
			return Verdict{Outcome: Wait, RequeueAfter: min(limit-c.failedFor, periodOf(c.x.Period)), Message: fmt.Sprintf(
				"no pod of %s, a revision of %s, has passed its probe yet and %d of its pods have not been probed: waiting up to %s for their first results",
				w.Revision, w.Ref, unjudged, limit)}, true
		}
	}
	if c.workloadSettling > 0 {
		v := hold(policyv1alpha1.HoldFailureStorm, "%d of %d pods of %s are failing, within maxFailing %d again; the storm must settle for %s more (policy %s)",
			w.FailingPods(), w.Desired, w.Ref, c.maxFailing, c.workloadSettling.Round(time.Second), by)
		v.RequeueAfter = c.workloadSettling
		return v, true
	}
	return Verdict{}, false
}

// nodeStorms holds the restarts of a node where many workloads fail at once: the node or its
// daemon is the likely cause, not the apps.
func nodeStorms(c *judged) (Verdict, bool) {
	n, rule := &c.f.Node, c.f.Settings.NodeStorm
	if rule.Storm(*n) {
		return hold(policyv1alpha1.HoldNodeStorm, "%d of %d pods in %d workloads are failing on node %s, more than %s",
			n.FailingPods, n.Pods, n.FailingWorkloads, n.Name, rule.MaxFailing.String()), true
	}
	if c.nodeSettling > 0 {
		v := hold(policyv1alpha1.HoldNodeStorm, "%d of %d pods are failing on node %s, within %s again; the storm must settle for %s more",
			n.FailingPods, n.Pods, n.Name, rule.MaxFailing.String(), c.nodeSettling.Round(time.Second))
		v.RequeueAfter = c.nodeSettling
		return v, true
	}
	return Verdict{}, false
}

// observeStorms looks at the key's and the node's storms before any rule answers: their settle
// timers move whatever the decision.
func observeStorms(c *judged) {
	c.maxFailing, c.maxFailingBy = c.f.Policies.MaxFailing(c.workload.Desired)
	settle := c.f.Settings.StormSettle
	if st, ok := c.m.Hold(c.key); ok && st.Canary != nil && st.Canary.Pod == c.f.UID {
		// The hold's canary failing again is the held storm going on, not a new onset: its
		// restart was the storm's test, and failing it doubles the hold (bounded.go).
		if onset := c.m.StormOnset(c.key); !onset.IsZero() {
			c.workload.Onset = onset
			for i := range c.workload.Pods { // a copy (For): the facts are not changed
				if c.workload.Pods[i].UID == c.f.UID {
					c.workload.Pods[i].Onset = onset
				}
			}
		}
	}
	last, seen := c.m.LastStorm(c.key)
	storm := c.workload.Storm(c.maxFailing)
	if !storm && seen && !Correlated(c.workload.Onset, c.m.StormOnset(c.key)) {
		// The storm last seen is one of pods whose failures began apart from this pod's (they may
		// still storm among themselves): its settling holds them, not this pod.
		seen = false
	}
	c.workloadSettling, c.seen.WorkloadStorm = Settling(storm, last, seen, settle, c.now)
	c.seen.WorkloadStormOnset = c.workload.Onset
	last, seen = c.m.LastNodeStorm(c.f.Node.Name)
	c.nodeSettling, c.seen.NodeStorm = Settling(c.f.Settings.NodeStorm.Storm(c.f.Node), last, seen, settle, c.now)
}

// StormMark is what a decision tells the memory about a storm's settle timer.
type StormMark int

const (
	// StormUnchanged leaves the timer as it is.
	StormUnchanged StormMark = iota
	// StormSeen: in a storm now; the timer starts again.
	StormSeen
	// StormSettled: the storm has settled; the timer is forgotten.
	StormSettled
)

// Settling gives the storm rules hysteresis: a workload (or node) stays held for settle after it
// was last seen in a storm. Without it, pods that recover a probe period apart make the failing
// count drop below the limit while some of them are still failing, and those would be restarted
// at once although they were about to recover too. Given whether there is a storm now and when
// one was last seen, it returns how much longer restarts stay held (settle while in a storm,
// what is left of it after, zero once it has passed or when settle is zero) and what the
// memory records.
func Settling(storm bool, last time.Time, seen bool, settle time.Duration, now time.Time) (time.Duration, StormMark) {
	switch {
	case settle <= 0:
		return 0, StormUnchanged
	case storm:
		return settle, StormSeen
	case !seen:
		return 0, StormUnchanged
	}
	if left := last.Add(settle).Sub(now); left > 0 {
		return left, StormUnchanged
	}
	return 0, StormSettled
}

// MaxFailing is the smallest storm threshold of the governing policies.
func (g Governing) MaxFailing(desired int32) (int32, PolicyKey) {
	n, by, _ := g.min(desired, func(p *Policy) *intstr.IntOrString { return &p.MaxFailing })
	return n, by
}

// FailingPods counts pods with a Failed liveness state (terminating pods excluded: they are going
// away whatever their probe says) whose failures began with the decided pod's (Correlated).
func (w WorkloadState) FailingPods() int32 {
	n := int32(0)
	for _, p := range w.Pods {
		if p.Failing && !p.Terminating && w.correlated(p) {
			n++
		}
	}
	return n
}

// SuspectPods counts pods that have started failing a liveness probe below its threshold, with the
// decided pod (Correlated).
func (w WorkloadState) SuspectPods() int32 {
	n := int32(0)
	for _, p := range w.Pods {
		if p.Suspect && !p.Failing && !p.Terminating && w.correlated(p) {
			n++
		}
	}
	return n
}

// Storm reports whether failing and suspect pods together exceed maxFailing: with 10 replicas and
// maxFailing 50% (= 5), 5 are not a storm and 6 are. A workload of one or two desired replicas
// never storms on suspects alone (see countedSuspects).
func (w WorkloadState) Storm(maxFailing int32) bool {
	return w.FailingPods()+w.countedSuspects() > maxFailing
}

// MinReplicasForSuspects is the smallest workload whose suspect pods count as storm evidence. In
// a workload of one or two replicas a sibling's flaky probe would be half the evidence: its hang
// would be held for a neighbour's noise.
const MinReplicasForSuspects = 3

// countedSuspects are the suspect pods that count as storm evidence.
func (w WorkloadState) countedSuspects() int32 {
	if w.Desired < MinReplicasForSuspects {
		return 0
	}
	return w.SuspectPods()
}

// RevisionStorm looks at the pods of the failing pod's own revision (see Revision): a new pod
// template whose probe fails on every pod of it (a rollout with a wrong probe) is a storm even
// while the revision is still a small part of the workload. Only the revision's pods the probe has
// judged count (failing, suspect or healthy): in a rollout the newest pods are still starting or
// waiting for their first probe when the first ones reach their failure threshold, and a probe
// that has failed on every pod it has judged so far is no evidence that restarting helps. It
// returns the failing and suspect pods of the revision and its judged pods; maxFailingOf scales
// the policy's maxFailing to them. At least two pods must be failing: one broken pod alone is no
// storm. A failing or suspect pod whose failures did not begin with the decided pod's (Correlated)
// is judged but not bad.
func (w WorkloadState) RevisionStorm(maxFailingOf func(int32) int32) (bad, total int32, storm bool) {
	if w.RevisionUID == "" {
		return 0, 0, false
	}
	suspects := w.Desired >= MinReplicasForSuspects
	for _, p := range w.Pods {
		if p.Controller != w.RevisionUID || p.Terminating {
			continue
		}
		switch {
		case (p.Failing || p.Suspect && suspects) && w.correlated(p):
			bad++
			total++
		case p.Healthy || p.Suspect || p.Failing:
			total++
		}
	}
	return bad, total, bad >= 2 && bad > maxFailingOf(total)
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

// RevisionEvidenceWait bounds how long a failing pod of an unproven revision (RevisionUnproven)
// waits for its siblings' first results: three probe periods, at least 10 s, which covers the
// spread of container starts in a rollout on a busy node.
func RevisionEvidenceWait(periodSeconds int32) time.Duration {
	return max(10*time.Second, 3*periodOf(periodSeconds))
}

// periodOf is a probe's period, with the API's default of 10 s when unset.
func periodOf(periodSeconds int32) time.Duration {
	if periodSeconds <= 0 {
		periodSeconds = 10
	}
	return time.Duration(periodSeconds) * time.Second
}

// startingToFail says how many of the failing pods have not reached their failure threshold yet.
func startingToFail(n int32) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them starting to fail)", n)
}

// NodeStormRule is the failure-storm breaker applied across one node: when many unrelated
// workloads fail on one node at once, the node or its daemon is the likely cause, not the apps.
type NodeStormRule struct {
	// MaxFailing of the node's enrolled pods (int or percent, rounded up). 100% disables the rule.
	MaxFailing intstr.IntOrString
	// MinWorkloads is how many distinct workloads must be failing on the node before it can be a
	// node storm, so that one workload's own storm is not blamed on the node.
	MinWorkloads int32
}

// Validate checks the manager flags.
func (r NodeStormRule) Validate() error {
	if err := ValidateIntOrPercent(r.MaxFailing); err != nil {
		return fmt.Errorf("--node-storm-max-failing: %w", err)
	}
	if r.MinWorkloads < 1 {
		return fmt.Errorf("--node-storm-min-workloads: must be at least 1, got %d", r.MinWorkloads)
	}
	return nil
}

// Uncorrelated reports whether failures that began at since (zero: not marked) started more than
// StormCorrelation before onset (zero: unknown) to count toward onset's node storm. Both are on
// the same node's clock.
func Uncorrelated(since, onset time.Time) bool {
	return !since.IsZero() && !onset.IsZero() && since.Before(onset.Add(-StormCorrelation))
}

// Storm reports whether the node is in a storm: at least MinWorkloads workloads failing there and
// failing pods above MaxFailing of the node's pods.
func (r NodeStormRule) Storm(n NodeState) bool {
	return n.FailingWorkloads >= r.MinWorkloads && n.FailingPods > Scaled(r.MaxFailing, n.Pods)
}
