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

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// Step 7: the rate limit. A restart needs a token from the manager-wide bucket and from each
// governing policy's; the memory takes them when it applies the restart, so a held decision never
// uses up the rate limit. A restart released by a canary whose restart has proven to help
// (bounded.go) does not wait on them: the canary showed that a restart cures this workload, and
// what is left to protect is its availability, which the budget guards. It still takes the tokens
// the buckets hold (Decision.Proven), so that the other workloads they serve see them used.

func rateLimited(c *judged) (Verdict, bool) {
	at := c.provenAt()
	if !at.IsZero() && !c.now.Before(at) {
		c.proven = true
		return Verdict{}, false
	}
	wait := c.m.TokenWait(c.f.Pod.Namespace, c.f.Policies)
	if wait <= 0 {
		return Verdict{}, false
	}
	v := hold(policyv1alpha1.HoldRateLimited, "rate limit reached; next token in %s", wait.Round(time.Millisecond))
	v.RequeueAfter = wait
	if !at.IsZero() && at.Sub(c.now) < wait {
		v.Message += fmt.Sprintf("; the canary of the held restarts passed: from %s they no longer wait for tokens", stamp.Seconds(at))
		v.RequeueAfter = at.Sub(c.now)
	}
	return v, true
}

// provenAt is when the failure's restart no longer waits on the token buckets, a canary of its key
// having passed; zero when no canary of its key passed (or its restart did not help after all),
// it is the canary, or it is evicted instead (an eviction keeps its rate limit). A failure no
// doubt rule held (the storm ended) is judged by its key's hold as the memory keeps it.
func (c *judged) provenAt() time.Time {
	if c.evict {
		return time.Time{}
	}
	step := c.doubt
	if step == nil {
		st, ok := c.m.Hold(c.key)
		if !ok || st.Released.IsZero() {
			return time.Time{}
		}
		maxHold, _ := c.f.Policies.MaxHold()
		s := BoundDoubt(st, true, st.Reason, maxHold, c.tally.Ineffective, c.evidence(), c.now)
		step = &s
	}
	if step.Canary {
		return time.Time{}
	}
	return step.ProvenAt
}
