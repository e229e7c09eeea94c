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
	}
	if p, ok := c.f.Policies.DryRun(); ok {
		return hold(policyv1alpha1.HoldDryRun, "would restart container %s; policy %s is in DryRun mode", c.x.Container, p.Key), true
	}
	return Verdict{}, false
}
