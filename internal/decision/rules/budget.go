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
)

// Step 6: maxUnavailable. A pod that is already unavailable may always be restarted; an
// available one only while fewer than maxUnavailable pods of its workload are unavailable. Pods
// the operator will never restart (Pending, blacklisted, held by choice) count too, but a hold
// caused by them alone ends within maxHold: past it they stop counting.

func budget(c *judged) (Verdict, bool) {
	if !c.self.Available() {
		return Verdict{}, false
	}
	maxUnavail, by := c.f.Policies.MaxUnavailable(c.workload.Desired)
	u := c.workload.Unavailable()
	if u < maxUnavail {
		return Verdict{}, false
	}
	v := hold(policyv1alpha1.HoldMaxUnavailable, "%d of %d pods of %s are unavailable, maxUnavailable is %d (policy %s)",
		u, c.workload.Desired, c.workload.Ref, maxUnavail, by)
	stuck := c.workload.NeverRestartedUnavailable()
	maxHold, _ := c.f.Policies.MaxHold()
	if stuck == 0 || u-stuck >= maxUnavail || maxHold <= 0 {
		return v, true
	}
	// Held only behind pods the operator will never restart: they do not give their place back
	// by themselves, so past maxHold of the key's hold they stop counting. The key's doubt hold,
	// if any, is this hold's start (its canary or released pods may be the ones held here).
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
	v.Message += fmt.Sprintf("; %d of them the operator will not restart (Pending, blacklisted or held by choice): "+
		"they stop counting at %s, maxHold after %s", stuck, stamp(end), stamp(st.Onset))
	v.RequeueAfter = end.Sub(c.now)
	return v, true
}

// NeverRestartedUnavailable counts the unavailable pods the operator will never restart
// (PodState.NeverRestarted) and is not restarting now.
func (w WorkloadState) NeverRestartedUnavailable() int32 {
	n := int32(0)
	for _, p := range w.Pods {
		if p.NeverRestarted && !p.Available() && !p.ActiveCRR && !p.Recovering && !p.Terminating {
			n++
		}
	}
	return n
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

// MaxUnavailable is the smallest budget of the governing policies for a workload of desired
// replicas, and the policy that sets it.
func (g Governing) MaxUnavailable(desired int32) (int32, PolicyKey) {
	return g.min(desired, func(p *Policy) intstr.IntOrString { return p.MaxUnavailable })
}
