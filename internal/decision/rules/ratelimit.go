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
	"time"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Step 7: the rate limit. A restart needs a token from the manager-wide bucket and from each
// governing policy's; the memory takes them when it applies the restart, so a held decision never
// uses up the rate limit.

func rateLimited(c *judged) (Verdict, bool) {
	wait := c.m.TokenWait(c.f.Pod.Namespace, c.f.Policies)
	if wait <= 0 {
		return Verdict{}, false
	}
	v := hold(policyv1alpha1.HoldRateLimited, "rate limit reached; next token in %s", wait.Round(time.Millisecond))
	v.RequeueAfter = wait
	return v, true
}
