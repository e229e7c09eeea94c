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
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Step 6: maxUnavailable. A pod that is already unavailable may always be restarted; an
// available one only while fewer than maxUnavailable pods of its workload are unavailable.

func budget(c *judged) (Verdict, bool) {
	if !c.self.Available() {
		return Verdict{}, false
	}
	maxUnavail, by := c.f.Policies.MaxUnavailable(c.workload.Desired)
	if u := c.workload.Unavailable(); u >= maxUnavail {
		return hold(policyv1alpha1.HoldMaxUnavailable, "%d of %d pods of %s are unavailable, maxUnavailable is %d (policy %s)",
			u, c.workload.Desired, c.workload.Ref, maxUnavail, by), true
	}
	return Verdict{}, false
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
