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

// Package memory is what the decision remembers between events: the requests it created and has
// not seen finished (expectations), the failing container instances (when each was first seen,
// its hold or wait; indexed by pod, workload, node and namespace), the restarts it requested and whether they helped, what it decided per policy
// (counters), when each workload and node was last in a storm (settle timers), and the token
// buckets. One Memory owns all of it under one lock that never covers I/O. Decisions change it
// only through Apply (Decide applies what it decides); the watches tell it what the cluster did
// (a request finished, a pod or a policy gone); the policy-status controller reads a Snapshot,
// and is told when a policy's counts change.
//
// It is lost on a manager restart or leader change: expectations are then rebuilt from the
// cache, held decisions are recorded again once, counters start from zero (the policy status
// keeps the totals), buckets start full and storms that were settling end at once.
package memory

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// ExpectationTTL bounds how long a created request counts as active on the decision's word
// alone. Past it the cache decides (an active request is still counted from there); it only
// matters if a watch event is lost.
const ExpectationTTL = 2 * time.Minute

// Memory is everything the decision remembers between events.
type Memory struct {
	clock clock.PassiveClock
	// counted is told the policies whose counts a decision changed, after the lock is released.
	counted func([]rules.PolicyKey)
	// durable is told the keys whose hold record changed (or ended), after the lock is released.
	durable func([]rules.HoldKey)

	mu       sync.Mutex
	expected *expectations
	// instances are the failing container instances: first sightings, holds and waits.
	instances  *instances
	restarts   *restarts
	counts     *counters
	storms     timers[rules.HoldKey]
	nodeStorms timers[string]
	// stormOnsets keep, beside storms, the onset of the pod that last saw each key's storm.
	stormOnsets timers[rules.HoldKey]
	buckets     *buckets
	holds       *keyHolds
	// evictions are the pods' last eviction attempts (rules/evict.go), until the pod is gone.
	evictions map[types.UID]rules.EvictionRecord
}

// New returns an empty memory; global is the manager-wide bucket (PerMinute 0: none). counted,
// if set, is told the policies whose counts a decision changed; it must not block.
func New(c clock.PassiveClock, global rules.Rate, counted func([]rules.PolicyKey)) *Memory {
	return &Memory{
		clock:       c,
		counted:     counted,
		expected:    newExpectations(c, ExpectationTTL),
		instances:   newInstances(),
		restarts:    newRestarts(),
		counts:      newCounters(),
		storms:      timers[rules.HoldKey]{},
		stormOnsets: timers[rules.HoldKey]{},
		nodeStorms:  timers[string]{},
		buckets:     newBuckets(global, c.Now()),
		holds:       newKeyHolds(),
		evictions:   map[types.UID]rules.EvictionRecord{},
	}
}

// NotifyHolds sets whom the memory tells the keys whose hold record changed or ended (it must
// not block); set it before the first decision.
func (m *Memory) NotifyHolds(f func([]rules.HoldKey)) { m.durable = f }

// Decide decides one failure of the pod (rules.Decide) and applies the decision, under the
// memory's lock: two failures of one workload decided at once never see the same budget, as the
// first one's restart is expected before the second one is decided. The facts are read before,
// without the lock.
func (m *Memory) Decide(f *rules.Facts, x rules.Failure) rules.Decision {
	m.mu.Lock()
	d := rules.Decide(f, x, view{m: m, now: m.clock.Now()})
	counted := m.apply(d)
	changed := m.holds.take()
	m.mu.Unlock()
	m.tell(counted, d, changed)
	return d
}

// Judge decides one failure as Decide does but changes nothing: what the engine would do. The
// figures of a Shadow pod ask it what the rules past the Shadow switch say, with the facts' Shadow
// flag cleared.
func (m *Memory) Judge(f *rules.Facts, x rules.Failure) rules.Decision {
	m.mu.Lock()
	defer m.mu.Unlock()
	return rules.Decide(f, x, view{m: m, now: m.clock.Now()})
}

// Apply records what came of a decision: Requested once its request is created, Withdrawn when it
// is not.
func (m *Memory) Apply(d rules.Decision) {
	m.mu.Lock()
	counted := m.apply(d)
	changed := m.holds.take()
	m.mu.Unlock()
	m.tell(counted, d, changed)
}

func (m *Memory) tell(counted bool, d rules.Decision, changed []rules.HoldKey) {
	if counted && m.counted != nil && len(d.StatusPolicies) > 0 {
		m.counted(d.StatusPolicies)
	}
	m.tellHolds(changed)
}

func (m *Memory) tellHolds(changed []rules.HoldKey) {
	if len(changed) > 0 && m.durable != nil {
		m.durable(changed)
	}
}

// apply changes the memory as d says, and reports whether it counted d in its policies.
func (m *Memory) apply(d rules.Decision) (counted bool) {
	inst := rules.Instance{Container: d.Failure.Container, ContainerID: d.Failure.ContainerID}
	switch d.Outcome {
	case rules.Ignore:
		return false
	case rules.Requested:
		now := m.clock.Now()
		if m.instances.get(d.Pod, inst) != nil {
			m.instances.update(d.Pod, inst, func(x *instance) { x.hold, x.waiting = nil, false })
			m.endUnheld(d.Key)
		}
		m.restarts.requested(d.Workload, d.UID, inst.Container, inst.ContainerID, d.Failure.Since, d.Soon, now)
		m.counts.requested(d.StatusPolicies, now)
		return true
	case rules.Withdrawn:
		if !d.Proven { // a proven restart may have taken less than a token: it gives none back
			m.buckets.giveBack(d.Pod.Namespace, d.Policies, m.clock.Now())
		}
		m.expected.observed(d.UID, d.Failure.Request)
		m.holds.withdrawn(d)
		return false
	case rules.Evicted, rules.EvictionRefused, rules.EvictionWithdrawn:
		m.evictionAnswered(d, inst)
		return false
	}
	// Wait, Hold, Restart: first what the decision saw, whichever rule answered.
	s := d.Seen
	m.storms.mark(d.Key, s.WorkloadStorm, s.At)
	m.stormOnsets.mark(d.Key, s.WorkloadStorm, s.WorkloadStormOnset)
	m.nodeStorms.mark(d.Node, s.NodeStorm, s.At)
	for _, id := range s.Ineffective {
		m.restarts.ineffective(d.Workload, id)
	}
	for _, r := range s.Finished {
		m.expected.observed(r.Pod, r.Name)
	}
	if s.Hold != nil {
		m.holds.set(d.Key, d.WorkloadRef, *s.Hold)
	}
	m.instances.update(d.Pod, inst, func(x *instance) {
		if x.firstSeen.IsZero() {
			x.firstSeen = s.At
		}
		x.workload, x.node, x.waiting = d.Workload, d.Node, d.Outcome == rules.Wait
		if d.Outcome == rules.Hold {
			x.hold = heldBy(d, x.hold)
		}
	})
	switch d.Outcome {
	case rules.Hold:
		if d.NewHold {
			m.counts.held(d.StatusPolicies, d.Reason)
		}
		if d.Reason == policyv1alpha1.HoldRateLimited {
			m.buckets.take(d.Pod.Namespace, d.Policies, s.At) // takes nothing: brings the buckets up to date
		}
		m.endUnheld(d.Key) // held by choice now, its hold may have no held pod left
		return d.NewHold
	case rules.Restart:
		m.expected.expect(d.UID, d.Failure.Request)
		if d.Proven {
			m.buckets.drain(d.Pod.Namespace, d.Policies, s.At)
		} else {
			m.buckets.take(d.Pod.Namespace, d.Policies, s.At)
		}
		m.holds.canary(d, s.At)
	case rules.Evict:
		// As a restart: the pod counts as unavailable until it is gone, and a token is spent.
		m.expected.expect(d.UID, rules.EvictionRequest)
		m.buckets.take(d.Pod.Namespace, d.Policies, s.At)
		m.evictions[d.UID] = rules.EvictionRecord{At: s.At}
		m.holds.canary(d, s.At)
	}
	return false
}

// evictionAnswered records what the API server answered to an Evict decision: an evicted pod
// is held no more; a refused or withdrawn eviction gives its token back.
func (m *Memory) evictionAnswered(d rules.Decision, inst rules.Instance) {
	switch d.Outcome {
	case rules.Evicted:
		if m.instances.get(d.Pod, inst) != nil {
			m.instances.update(d.Pod, inst, func(x *instance) { x.hold, x.waiting = nil, false })
			m.endUnheld(d.Key)
		}
	case rules.EvictionRefused, rules.EvictionWithdrawn:
		m.buckets.giveBack(d.Pod.Namespace, d.Policies, m.clock.Now())
		m.expected.observed(d.UID, rules.EvictionRequest)
		m.holds.withdrawn(d) // the pod stays: another may be the canary
		if e, ok := m.evictions[d.UID]; ok && d.Outcome == rules.EvictionWithdrawn {
			// No attempt: kept only so that the record written for it is known void (rules/evict.go).
			e.Withdrawn = true
			m.evictions[d.UID] = e
		} else if ok {
			// The attempt stays remembered, with why: one per pod per breaker window.
			e.Refused = d.Message
			m.evictions[d.UID] = e
		}
	}
}

// heldBy is the hold a Hold decision leaves, prev the instance's hold before it (nil: none).
func heldBy(d rules.Decision, prev *hold) *hold {
	h := &hold{reason: d.Reason, since: d.HeldSince, policies: d.StatusPolicies, announced: d.Seen.At}
	h.maxHold, _ = d.Policies.MaxHold()
	if prev != nil && !d.Announce {
		h.announced = prev.announced
	}
	if prev != nil && !d.NewHold {
		h.message = prev.message
	} else {
		h.message = d.Message
	}
	return h
}

// Retain keeps what is remembered of the pod's instances still failing (their first sightings,
// holds and waits) and forgets the others; a hold none of whose pods is held any more ends.
func (m *Memory) Retain(pod types.NamespacedName, failing []rules.Instance) {
	m.mu.Lock()
	keys := m.instances.keysOf(pod)
	m.instances.retain(pod, func(i rules.Instance) bool { return slices.Contains(failing, i) })
	m.endUnheld(keys...)
	changed := m.holds.take()
	m.mu.Unlock()
	m.tellHolds(changed)
}

// RequestFinished ends the expectation of a request the cache shows finished or deleted.
func (m *Memory) RequestFinished(pod types.UID, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expected.observed(pod, name)
}

// ForgetPod forgets a pod that is gone: its instances, its restarts, its expected request.
func (m *Memory) ForgetPod(pod types.NamespacedName, uid types.UID) {
	m.mu.Lock()
	keys := m.instances.keysOf(pod)
	m.instances.forget(pod)
	if uid != "" {
		m.restarts.forgetPod(uid)
		m.expected.forget(uid)
		delete(m.evictions, uid)
	}
	m.endUnheld(keys...)
	changed := m.holds.take()
	m.mu.Unlock()
	m.tellHolds(changed)
}

// ForgetPolicy forgets a deleted policy's bucket and counters.
func (m *Memory) ForgetPolicy(key rules.PolicyKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buckets.forget(key)
	m.counts.forget(key)
}

// HeldInWorkload, HeldOnNode and HeldInNamespace return the pods with a held restart there: the
// pods an event there may let through. HeldInWorkload adds the pods that wait in the workload
// (rules.Wait): a change in the workload may end their wait.
func (m *Memory) HeldInWorkload(w rules.WorkloadKey) []types.NamespacedName {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.instances.inWorkload(w)
}

func (m *Memory) HeldOnNode(node string) []types.NamespacedName {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.instances.heldOnNode(node)
}

func (m *Memory) HeldInNamespace(ns string) []types.NamespacedName {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.instances.heldInNamespace(ns)
}

// view is the memory as the rules read it, under its lock.
type view struct {
	m   *Memory
	now time.Time
}

var _ rules.Memory = view{}

func (v view) Now() time.Time                                     { return v.now }
func (v view) Expected(pod types.UID) (string, bool)              { return v.m.expected.expected(pod) }
func (v view) LastStorm(k rules.HoldKey) (time.Time, bool)        { return v.m.storms.last(k) }
func (v view) LastNodeStorm(n string) (time.Time, bool)           { return v.m.nodeStorms.last(n) }
func (v view) Hold(k rules.HoldKey) (rules.DoubtHold, bool)       { return v.m.holds.of(k) }
func (v view) Restarts(w rules.WorkloadKey) []rules.RestartRecord { return v.m.restarts.of(w) }
func (v view) StormOnset(k rules.HoldKey) time.Time {
	at, _ := v.m.stormOnsets.last(k)
	return at
}
func (v view) TokenWait(ns string, g rules.Governing) time.Duration {
	return v.m.buckets.wait(ns, g, v.now)
}
func (v view) FirstSeen(pod types.NamespacedName, i rules.Instance) (time.Time, bool) {
	return v.m.instances.firstSeenOf(pod, i)
}
func (v view) Held(pod types.NamespacedName, i rules.Instance) (rules.HeldRecord, bool) {
	return v.m.instances.held(pod, i)
}
func (v view) Eviction(pod types.UID) (rules.EvictionRecord, bool) {
	e, ok := v.m.evictions[pod]
	return e, ok
}

// Snapshot is a read-only copy of what the policy-status controller shows of the memory.
type Snapshot struct {
	// Reasons is the hold reason of each workload with held pods: the first in decision order
	// when its pods are held for several.
	Reasons map[rules.WorkloadKey]policyv1alpha1.HoldReason
	// Counts are the decisions counted for the policy since the manager started.
	Counts Counts
	// HeldPods are the held restarts of the pods the policy governs, oldest first.
	HeldPods []HeldPod

	ineffective map[rules.WorkloadKey]int
	pending     map[types.UID]bool
	// lastStorm is when each workload was last seen in a storm, of any of its containers.
	lastStorm map[rules.WorkloadKey]time.Time
}

// Snapshot copies what the status of policy shows.
func (m *Memory) Snapshot(policy rules.PolicyKey) Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Snapshot{
		Reasons:     m.instances.reasons(),
		ineffective: m.instances.heldFor(policyv1alpha1.HoldRestartIneffective),
		Counts:      m.counts.counts(policy),
		HeldPods:    m.instances.governedBy(policy),
		pending:     map[types.UID]bool{},
		lastStorm:   map[rules.WorkloadKey]time.Time{},
	}
	for k, at := range m.storms {
		if at.After(s.lastStorm[k.Workload]) {
			s.lastStorm[k.Workload] = at
		}
	}
	for uid := range m.expected.byPod {
		if m.expected.pending(uid) {
			s.pending[uid] = true
		}
	}
	return s
}

// Pending reports whether a request created for the pod may still be running.
func (s Snapshot) Pending(pod types.UID) bool { return s.pending[pod] }

// Holds returns what the memory says of the workload, for the rules to judge (rules.JudgeWorkload).
func (s Snapshot) Holds(w rules.WorkloadKey) rules.WorkloadHolds {
	last, seen := s.lastStorm[w]
	return rules.WorkloadHolds{Reason: s.Reasons[w], Ineffective: s.ineffective[w] > 0, LastStorm: last, StormSeen: seen}
}
