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

package memory

import (
	"maps"
	"time"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// Counts are the decisions counted for one policy since the manager started.
type Counts struct {
	Requested   int64
	Held        map[policyv1alpha1.HoldReason]int64
	LastRestart time.Time
}

// Sub returns what c counted beyond base (an earlier Counts of the same policy). When c is below
// base in any count, the counters were reset in between (the policy was deleted and created
// again): then all of c is new.
func (c Counts) Sub(base Counts) Counts {
	if c.Requested < base.Requested {
		return c
	}
	for r, n := range base.Held {
		if c.Held[r] < n {
			return c
		}
	}
	out := Counts{Requested: c.Requested - base.Requested, LastRestart: c.LastRestart, Held: map[policyv1alpha1.HoldReason]int64{}}
	for r, n := range c.Held {
		if d := n - base.Held[r]; d != 0 {
			out.Held[r] = d
		}
	}
	return out
}

// IsZero reports whether nothing was counted.
func (c Counts) IsZero() bool {
	for _, n := range c.Held {
		if n != 0 {
			return false
		}
	}
	return c.Requested == 0
}

// counters keep the per-policy counts; they are monotonic until the policy is forgotten.
type counters struct {
	byPolicy map[rules.PolicyKey]*Counts
}

func newCounters() *counters {
	return &counters{byPolicy: map[rules.PolicyKey]*Counts{}}
}

func (c *counters) get(p rules.PolicyKey) *Counts {
	x := c.byPolicy[p]
	if x == nil {
		x = &Counts{Held: map[policyv1alpha1.HoldReason]int64{}}
		c.byPolicy[p] = x
	}
	return x
}

// held counts one held restart for each policy.
func (c *counters) held(policies []rules.PolicyKey, r policyv1alpha1.HoldReason) {
	for _, p := range policies {
		c.get(p).Held[r]++
	}
}

// requested counts one requested restart for each policy, at the given time.
func (c *counters) requested(policies []rules.PolicyKey, at time.Time) {
	for _, p := range policies {
		x := c.get(p)
		x.Requested++
		if at.After(x.LastRestart) {
			x.LastRestart = at
		}
	}
}

// forget drops the counts of a deleted policy.
func (c *counters) forget(p rules.PolicyKey) { delete(c.byPolicy, p) }

// counts returns a copy of what was counted for the policy since the manager started.
func (c *counters) counts(p rules.PolicyKey) Counts {
	x := c.byPolicy[p]
	if x == nil {
		return Counts{Held: map[policyv1alpha1.HoldReason]int64{}}
	}
	out := *x
	out.Held = maps.Clone(x.Held)
	return out
}
