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

	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// Step 6: the budget (maxUnavailable, else the PodDisruptionBudget). A pod that is already
// unavailable may be restarted, unless a PodDisruptionBudget says IfHealthyBudget and the
// workload is below it; an available one only while fewer pods of its workload than the budget
// are unavailable. Every hold ends. Unavailability the operator causes (its own restarts, active
// or recovering) ends by itself and always counts. The rest may never end (a sibling whose
// readiness fails on a broken dependency, one crash-looping by itself, Pending or held by choice,
// a replica the workload cannot create), so past maxHold of the key's hold it stops counting.

func budget(c *judged) (Verdict, bool) {
	b := c.f.Budget(c.workload.Desired)
	u := c.workload.Unavailable()
	// over tells whether n unavailable pods leave no room for this restart.
	over := func(n int32) bool { return n >= b.Max }
	var v Verdict
	switch {
	case c.self.Available():
		if !over(u) {
			return Verdict{}, false
		}
		v = hold(policyv1alpha1.HoldMaxUnavailable, "%d of %d pods of %s are unavailable, %s", u, c.workload.Desired, c.workload.Ref, b)
	case b.PDB != nil && !b.PDB.AlwaysAllow:
		// As the eviction API reads IfHealthyBudget: a pod that is not healthy may be disrupted
		// only while the workload is within its budget.
		over = func(n int32) bool { return n > b.Max }
		if !over(u) {
			return Verdict{}, false
		}
		v = hold(policyv1alpha1.HoldMaxUnavailable, "%d of %d pods of %s are unavailable, more than %s; its unhealthyPodEvictionPolicy IfHealthyBudget lets a pod that is not available be disrupted only within the budget",
			u, c.workload.Desired, c.workload.Ref, b)
	default:
		return Verdict{}, false
	}
	// ours can exceed u while the workload has more pods than desired (a surge).
	ours := min(u, c.workload.Restarting())
	maxHold, _ := c.f.Policies.MaxHold()
	if over(ours) || maxHold <= 0 {
		return v, true // the operator's own restarts give their places back
	}
	// Held behind unavailability the operator is not causing: it may never give its place back,
	// so past maxHold of the key's hold it stops counting. The key's doubt hold, if any, is this
	// hold's start (its canary or released pods may be the ones held here).
	st, seen := c.m.Hold(c.key)
	if c.seen.Hold != nil {
		st, seen = *c.seen.Hold, true
	}
	if !seen {
		st = DoubtHold{Reason: policyv1alpha1.HoldMaxUnavailable, Onset: c.now, Since: c.now, Period: maxHold}
	}
	st.Touched = c.now
	c.seen.Hold = &st
	end := st.Onset.Add(maxHold)
	if !c.now.Before(end) {
		return Verdict{}, false
	}
	v.Message += fmt.Sprintf("; %d of them the operator will not restart (%s): they stop counting at %s, maxHold after %s",
		u-ours, notRestarting(u-ours, min(u-ours, c.workload.Missing())), stamp.Seconds(end), stamp.Seconds(st.Onset))
	v.RequeueAfter = end.Sub(c.now)
	return v, true
}

// notRestarting says what the n unavailable the operator is not restarting are, missing of them
// replicas without a pod.
func notRestarting(n, missing int32) string {
	const pods = "pods not ready by themselves, Pending or held by choice"
	switch missing {
	case 0:
		return pods
	case n:
		return "replicas the workload has not created"
	}
	return fmt.Sprintf("replicas the workload has not created (%d), and %s", missing, pods)
}

// Restarting counts the unavailable pods the operator is restarting: an active request (the
// requests the memory expects included) or one they are recovering from.
func (w WorkloadState) Restarting() int32 {
	n := int32(0)
	for _, p := range w.Pods {
		if p.ActiveCRR || p.Recovering {
			n++
		}
	}
	return n
}

// Missing counts the desired replicas without a pod: a terminating pod is none.
func (w WorkloadState) Missing() int32 {
	n := w.Desired
	for _, p := range w.Pods {
		if !p.Terminating {
			n--
		}
	}
	return max(0, n)
}

// Available is Ready, not terminating, not being restarted and not recovering from a restart.
func (p PodState) Available() bool { return p.Ready && !p.ActiveCRR && !p.Recovering && !p.Terminating }

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

// MaxUnavailable is the smallest spec.maxUnavailable of the governing policies that set one, for
// a workload of desired replicas, and the policy that sets it; ok is false when none does.
func (g Governing) MaxUnavailable(desired int32) (n int32, by PolicyKey, ok bool) {
	return g.min(desired, func(p *Policy) *intstr.IntOrString { return p.MaxUnavailable })
}
