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
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// Step 5c, with spec.restartEffectiveness.action Evict: a pod whose own restarts do not help
// while the same container of its workload passes on another node fails likely because of where
// it runs. It is evicted instead of held, through the Eviction API (PodDisruptionBudgets apply),
// and on the restart's budget path: maxUnavailable and the rate limit still come after. One
// eviction per pod per breaker window: a refused one leaves the pod held RestartIneffective until
// the window has passed.

// EvictionRequest is the name under which the memory expects an eviction, as it expects a
// restart's request: the pod counts as unavailable until it is gone.
const EvictionRequest = "eviction"

// EvictionRecord is what the memory keeps of a pod's last eviction attempt.
type EvictionRecord struct {
	// At is when the eviction was decided, on the manager's clock.
	At time.Time
	// Refused is the API server's refusal ("" while none is known).
	Refused string
	// Withdrawn: the eviction was not tried after all (the failure not confirmed, the pod gone,
	// the API server not reached); it counts for nothing, and the policies' record of it is void.
	Withdrawn bool
}

// Placement is what the pod shows of where its replacement would run. An eviction that cannot
// move the pod elsewhere only repeats itself (evicted, made again on the same node, its restarts
// not helping there, evicted again), or costs more than the failure: such a pod stays held.
// Read (facts) only when the governing policies evict.
type Placement struct {
	// ControllerGroup and ControllerKind name the kind of the pod's controller (its controller
	// ownerReference); "" when it has none.
	ControllerGroup, ControllerKind string
	// Node is the one node the pod is bound to, and By says what binds it; "" when nothing the
	// operator can see does.
	Node, By string
}

// Unmovable says why evicting the pod would not move it to another node, or would cost more
// than a held restart; "" when it may be evicted.
func (p Placement) Unmovable() string {
	switch {
	case p.ControllerKind == "DaemonSet":
		// Any group: the same kind name of other projects' node daemons schedules the same way.
		return "a DaemonSet pod cannot move to another node"
	case p.ControllerGroup == "batch" && p.ControllerKind == "Job":
		return "a Job pod's eviction counts against its backoffLimit"
	case p.Node != "":
		return fmt.Sprintf("bound to node %s by %s", p.Node, p.By)
	}
	return ""
}

// evictable reports whether the pod, whose own restarts do not help, is evicted instead of held,
// and when not, why, for the hold's message ("" when no policy asks for evictions).
func evictable(c *judged, b RestartBreaker) (bool, string) {
	if !b.Evict {
		return false, ""
	}
	if why := c.f.Placement.Unmovable(); why != "" {
		return false, "; not evicted: " + why
	}
	e, known := c.m.Eviction(c.f.UID)
	if known && !e.Withdrawn && c.now.Sub(e.At) < b.Window {
		next := stamp.Seconds(e.At.Add(b.Window))
		if e.Refused != "" {
			return false, fmt.Sprintf("; its eviction was refused at %s: %s; the next may be tried at %s", stamp.Seconds(e.At), e.Refused, next)
		}
		return false, fmt.Sprintf("; it was evicted at %s; one eviction per pod per %s", stamp.Seconds(e.At), b.Window)
	}
	// A new leader's memory is empty: the policies' status keeps the evictions decided before.
	// The record stands for the attempt (written before the call), not for its answer.
	if r, by, ok := c.f.Policies.RecentEviction(c.f.UID, c.now); ok && (!known || !withdrawnRecord(r, e)) {
		return false, fmt.Sprintf("; its eviction was tried at %s (recorded in status.recentEvictions of policy %s until %s, whatever the answer was); one eviction per pod per %s",
			stamp.Seconds(r.Time.Time), by, stamp.Seconds(r.Expires.Time), b.Window)
	}
	if c.f.Elsewhere[c.x.Container] == 0 {
		return false, fmt.Sprintf("; not evicted: no pod of %s passes container %s on another node", c.workload.Ref, c.x.Container)
	}
	if by, next, full := c.f.Policies.FullEvictions(c.now); full {
		return false, fmt.Sprintf("; not evicted: status.recentEvictions of policy %s keeps %d evictions that have not expired, the most it records; the next may be tried at %s, when the first expires",
			by, MaxRecentEvictions, stamp.Seconds(next))
	}
	return true, ""
}

// withdrawnRecord reports whether r is the record of the attempt e, which was withdrawn: it is
// being taken back, though a cache may still show it (status times have second precision).
func withdrawnRecord(r policyv1alpha1.RecentEviction, e EvictionRecord) bool {
	return e.Withdrawn && !r.Time.Time.Before(e.At.Truncate(time.Second))
}

// evictInstead turns the restart the rules allowed into the eviction the ineffective rule chose.
func evictInstead(c *judged, v *Verdict) {
	*v = Verdict{Outcome: Evict, Message: fmt.Sprintf(
		"%d of the last %d restarts of pod %s in %s failed their probe again soon after the restart, while container %s passes in %d pod(s) of %s on other nodes: evicting it",
		c.podTally.Ineffective, c.podTally.Requested, c.f.Pod.Name, c.breaker.Window, c.x.Container, c.f.Elsewhere[c.x.Container], c.workload.Ref)}
}

// MaxRecentEvictions bounds a policy's status.recentEvictions (the API allows 16). An entry is
// the only record a new leader has of an eviction, so none is dropped before it expires: while a
// policy keeps this many, it evicts no other pod (FullEvictions).
const MaxRecentEvictions = 16

// FullEvictions returns a governing policy that records its evictions (every one that evicts
// but the default policy, which has no status) whose status.recentEvictions keeps
// MaxRecentEvictions entries that last at now, and when the first of them expires.
func (g Governing) FullEvictions(now time.Time) (PolicyKey, time.Time, bool) {
	for i := range g {
		p := &g[i]
		if p.IsDefault() || !p.Breaker.Enabled || !p.Breaker.Evict {
			continue
		}
		if live := PruneEvictions(p.Evictions, now); len(live) >= MaxRecentEvictions {
			return p.Key, NextExpiry(live), true
		}
	}
	return PolicyKey{}, time.Time{}, false
}

// RecentEviction returns an entry of a governing policy's status.recentEvictions that names the
// pod and has not expired at now, and the policy that keeps it.
func (g Governing) RecentEviction(pod types.UID, now time.Time) (policyv1alpha1.RecentEviction, PolicyKey, bool) {
	for i := range g {
		for _, e := range g[i].Evictions {
			if e.PodUID == pod && e.LastsAt(now) {
				return e, g[i].Key, true
			}
		}
	}
	return policyv1alpha1.RecentEviction{}, PolicyKey{}, false
}

// RecordEviction returns a policy's recent evictions with e added: newest first, without the
// entries expired at now nor an earlier one of the same pod. It never drops an entry that lasts:
// when MaxRecentEvictions others do, it returns list as it is and false (the eviction is not
// made). list is not changed.
func RecordEviction(list []policyv1alpha1.RecentEviction, e policyv1alpha1.RecentEviction, now time.Time) ([]policyv1alpha1.RecentEviction, bool) {
	kept := PruneEvictions(WithoutEviction(list, e.PodUID), now)
	if len(kept) >= MaxRecentEvictions {
		return list, false
	}
	out := append([]policyv1alpha1.RecentEviction{e}, kept...)
	slices.SortStableFunc(out, func(a, b policyv1alpha1.RecentEviction) int { return b.Time.Compare(a.Time.Time) })
	return out, true
}

// PruneEvictions returns the entries that have not expired at now, in order (nil when none is
// left). list is not changed.
func PruneEvictions(list []policyv1alpha1.RecentEviction, now time.Time) []policyv1alpha1.RecentEviction {
	var out []policyv1alpha1.RecentEviction
	for _, e := range list {
		if e.LastsAt(now) {
			out = append(out, e)
		}
	}
	return out
}

// WithoutEviction returns the entries that do not name the pod, in order (nil when none is
// left). list is not changed.
func WithoutEviction(list []policyv1alpha1.RecentEviction, pod types.UID) []policyv1alpha1.RecentEviction {
	var out []policyv1alpha1.RecentEviction
	for _, e := range list {
		if e.PodUID != pod {
			out = append(out, e)
		}
	}
	return out
}

// NextExpiry returns when the first of the entries expires (zero when there is none).
func NextExpiry(list []policyv1alpha1.RecentEviction) time.Time {
	var next time.Time
	for _, e := range list {
		if next.IsZero() || e.Expires.Time.Before(next) {
			next = e.Expires.Time
		}
	}
	return next
}
