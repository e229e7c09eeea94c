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

package restarts

import (
	"maps"
	"sync"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

// Counts are the decisions recorded for one policy since the manager started.
type Counts struct {
	Requested   int64
	Held        map[protection.Reason]int64
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
	out := Counts{Requested: c.Requested - base.Requested, LastRestart: c.LastRestart, Held: map[protection.Reason]int64{}}
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

// CountRecorder is what the decision controller records.
type CountRecorder interface {
	// Held counts one held restart for each policy.
	Held(policies []protection.PolicyKey, r protection.Reason)
	// Requested counts one requested restart for each policy, at the given time.
	Requested(policies []protection.PolicyKey, at time.Time)
	// Forget drops the counts of a deleted policy.
	Forget(p protection.PolicyKey)
}

// CountReader is what the policy-status controller reads.
type CountReader interface {
	// Counts returns what was recorded for the policy since the manager started.
	Counts(p protection.PolicyKey) Counts
}

// Counters keep the per-policy counts; they are monotonic until the policy is forgotten.
type Counters struct {
	mu       sync.Mutex
	byPolicy map[protection.PolicyKey]*Counts
}

var (
	_ CountRecorder = &Counters{}
	_ CountReader   = &Counters{}
)

// NewCounters returns empty counters.
func NewCounters() *Counters {
	return &Counters{byPolicy: map[protection.PolicyKey]*Counts{}}
}

func (c *Counters) get(p protection.PolicyKey) *Counts {
	x := c.byPolicy[p]
	if x == nil {
		x = &Counts{Held: map[protection.Reason]int64{}}
		c.byPolicy[p] = x
	}
	return x
}

// Held implements CountRecorder.
func (c *Counters) Held(policies []protection.PolicyKey, r protection.Reason) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range policies {
		c.get(p).Held[r]++
	}
}

// Requested implements CountRecorder.
func (c *Counters) Requested(policies []protection.PolicyKey, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range policies {
		x := c.get(p)
		x.Requested++
		if at.After(x.LastRestart) {
			x.LastRestart = at
		}
	}
}

// Forget implements CountRecorder.
func (c *Counters) Forget(p protection.PolicyKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byPolicy, p)
}

// Counts implements CountReader; the result is a copy.
func (c *Counters) Counts(p protection.PolicyKey) Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.byPolicy[p]
	if x == nil {
		return Counts{Held: map[protection.Reason]int64{}}
	}
	out := *x
	out.Held = maps.Clone(x.Held)
	return out
}
