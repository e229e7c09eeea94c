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
	"testing"
	"time"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

func TestCounters(t *testing.T) {
	a := rules.PolicyKey{Namespace: "ns", Name: "a"}
	b := rules.PolicyKey{Namespace: "ns", Name: "b"}
	t0 := time.Unix(1000, 0)
	c := newCounters()

	c.held([]rules.PolicyKey{a, b}, policyv1alpha1.HoldFailureStorm)
	c.held([]rules.PolicyKey{a}, policyv1alpha1.HoldFailureStorm)
	c.requested([]rules.PolicyKey{a}, t0)
	written := c.counts(a) // what a status write took
	if written.Requested != 1 || written.Held[policyv1alpha1.HoldFailureStorm] != 2 || !written.LastRestart.Equal(t0) {
		t.Fatalf("counts of a = %+v", written)
	}
	written.Held[policyv1alpha1.HoldDryRun] = 99 // a copy: changing it changes nothing
	if c.counts(a).Held[policyv1alpha1.HoldDryRun] != 0 {
		t.Fatal("counts must return a copy")
	}

	c.requested([]rules.PolicyKey{a}, t0.Add(time.Minute))
	c.requested([]rules.PolicyKey{a}, t0) // out of order: LastRestart keeps the latest
	c.held([]rules.PolicyKey{a}, policyv1alpha1.HoldRateLimited)
	delta := c.counts(a).Sub(c.counts(a))
	if !delta.IsZero() {
		t.Fatalf("x.Sub(x) = %+v", delta)
	}
	base := Counts{Requested: 1, Held: map[policyv1alpha1.HoldReason]int64{policyv1alpha1.HoldFailureStorm: 2}}
	delta = c.counts(a).Sub(base)
	if delta.Requested != 2 || delta.Held[policyv1alpha1.HoldRateLimited] != 1 || len(delta.Held) != 1 ||
		!delta.LastRestart.Equal(t0.Add(time.Minute)) || delta.IsZero() {
		t.Fatalf("delta = %+v", delta)
	}
	// Counters reset (the policy was deleted and created again): everything counted is new.
	reset := Counts{Requested: 1, Held: map[policyv1alpha1.HoldReason]int64{policyv1alpha1.HoldDryRun: 1}}
	if d := reset.Sub(c.counts(a)); d.Requested != 1 || d.Held[policyv1alpha1.HoldDryRun] != 1 {
		t.Fatalf("after a reset, delta = %+v", d)
	}
	if got := c.counts(b); got.Requested != 0 || got.Held[policyv1alpha1.HoldFailureStorm] != 1 {
		t.Fatalf("counts of b = %+v", got)
	}
	c.forget(b)
	if got := c.counts(b); !got.IsZero() {
		t.Fatalf("a forgotten policy counts %+v", got)
	}
}
