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
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Step 2: the switches. Each records what would have been restarted.

func switches(c *judged) (Verdict, bool) {
	switch {
	case c.f.RestartDisabled:
		return hold(policyv1alpha1.HoldDisabled, "would restart container %s, but the pod has restart-disabled=true", c.x.Container), true
	case !c.f.Settings.RestartsEnabled:
		return hold(policyv1alpha1.HoldDisabled,
			"would restart container %s, but restarts are disabled manager-wide (--restarts=disabled)", c.x.Container), true
	case c.f.Shadow:
		return shadowHold(c), true
	}
	return Verdict{}, false
}

// shadowHold holds the restart of a pod admitted in Shadow mode: it kept its native liveness
// probe, so the kubelet restarts it. The mode is the pod's, fixed at admission: when no governing
// policy says Shadow any more, the message says how to have the operator restart it.
func shadowHold(c *judged) Verdict {
	if p, ok := c.f.Policies.Shadow(); ok {
		return hold(policyv1alpha1.HoldShadow, "would restart container %s; the pod is in Shadow mode (policy %s): "+
			"the kubelet keeps its native livenessProbe", c.x.Container, p.Key)
	}
	return hold(policyv1alpha1.HoldShadow, "would restart container %s; the pod was admitted in Shadow mode and keeps "+
		"it (the kubelet keeps its native livenessProbe), though no policy governing it says Shadow now: re-create it "+
		"(kubectl rollout restart) to have it admitted in Enforce mode", c.x.Container)
}
