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
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// HoldRecord is a key's hold as it is kept in the API (rules.DoubtHold.Durable), with the workload
// its record names and is owned by.
type HoldRecord struct {
	Key  rules.HoldKey
	Ref  rules.WorkloadRef
	Hold rules.DoubtHold
}

// keyHolds are the holds of keys (a workload's container: doubt holds, and budget holds behind
// pods the operator never restarts). They are durable: each change of what is kept of a hold is
// reported (changed), for its record in the API to follow.
type keyHolds struct {
	byKey map[rules.HoldKey]*HoldRecord
	// changed are the keys whose record changed (or ended) since they were last taken.
	changed map[rules.HoldKey]struct{}
}

func newKeyHolds() *keyHolds {
	return &keyHolds{byKey: map[rules.HoldKey]*HoldRecord{}, changed: map[rules.HoldKey]struct{}{}}
}

func (h *keyHolds) of(k rules.HoldKey) (rules.DoubtHold, bool) {
	r, ok := h.byKey[k]
	if !ok {
		return rules.DoubtHold{}, false
	}
	return r.Hold, true
}

// set records the key's hold as a decision left it.
func (h *keyHolds) set(k rules.HoldKey, ref rules.WorkloadRef, st rules.DoubtHold) {
	r, ok := h.byKey[k]
	if !ok {
		r = &HoldRecord{Key: k}
		h.byKey[k] = r
	}
	if !ok || !sameDurable(r.Hold, st) || r.Ref != ref {
		h.changed[k] = struct{}{}
	}
	r.Ref, r.Hold = ref, st
}

// canary remembers the restart, or the eviction, decided as the canary of the key's hold: no
// other held pod goes until it is judged.
func (h *keyHolds) canary(d rules.Decision, at time.Time) {
	r, ok := h.byKey[d.Key]
	if !ok || !d.Canary {
		return
	}
	x := d.Failure
	r.Hold.Canary = &rules.Canary{Pod: d.UID, PodName: d.Pod.Name, Container: x.Container, Instance: x.ContainerID,
		Evicted: d.Outcome == rules.Evict, At: at, Deadline: rules.CanaryDeadline(at, x.Grace, d.Soon)}
	r.Hold.Canaries++
	h.changed[d.Key] = struct{}{}
}

// withdrawn forgets a canary whose request was not created, or whose eviction was refused or not
// tried: another held pod may go instead.
func (h *keyHolds) withdrawn(d rules.Decision) {
	r, ok := h.byKey[d.Key]
	if !ok || !d.Canary {
		return
	}
	if k := r.Hold.Canary; k != nil && k.Pod == d.UID && k.Instance == d.Failure.ContainerID {
		r.Hold.Canary, r.Hold.Canaries = nil, r.Hold.Canaries-1
		h.changed[d.Key] = struct{}{}
	}
}

// end forgets the key's hold.
func (h *keyHolds) end(k rules.HoldKey) {
	if _, ok := h.byKey[k]; ok {
		delete(h.byKey, k)
		h.changed[k] = struct{}{}
	}
}

// take returns the keys changed since the last take.
func (h *keyHolds) take() []rules.HoldKey {
	if len(h.changed) == 0 {
		return nil
	}
	out := make([]rules.HoldKey, 0, len(h.changed))
	for k := range h.changed {
		out = append(out, k)
	}
	clear(h.changed)
	return out
}

// canaryPending reports whether the hold waits for its canary's verdict, which only a decision
// can give, before its deadline.
func canaryPending(st rules.DoubtHold, now time.Time) bool {
	return st.Canary != nil && !now.After(st.Canary.Deadline)
}

// sameDurable reports whether two holds are one record in the API.
func sameDurable(a, b rules.DoubtHold) bool {
	if (a.Canary == nil) != (b.Canary == nil) || a.Canary != nil && !sameCanary(*a.Canary, *b.Canary) {
		return false
	}
	return a.Reason == b.Reason && a.Onset.Equal(b.Onset) && a.Since.Equal(b.Since) && a.Period == b.Period &&
		a.Canaries == b.Canaries && a.Released.Equal(b.Released)
}

func sameCanary(a, b rules.Canary) bool {
	return a.Pod == b.Pod && a.PodName == b.PodName && a.Container == b.Container &&
		a.Instance == b.Instance && a.Evicted == b.Evicted && a.At.Equal(b.At) && a.Deadline.Equal(b.Deadline)
}

// StaleHold is how long a hold none of whose pods is held any more, and whose canary is not
// awaited, is kept without a decision seeing it: held pods are decided again at least every
// recheck interval, so by then none is left (after a manager start, the loaded holds' pods have
// been decided again long before).
const StaleHold = 5 * time.Minute

// endUnheld ends the key's hold when none of its pods is held any more for a doubt or the budget
// (a choice never ends by itself) and no canary is awaited.
func (m *Memory) endUnheld(keys ...rules.HoldKey) {
	now := m.clock.Now()
	for _, k := range keys {
		if st, ok := m.holds.of(k); ok && !canaryPending(st, now) && !m.instances.heldIn(k) {
			m.holds.end(k)
		}
	}
}

// Sweep ends the holds no decision has seen for StaleHold whose pods are no longer held: their
// pods recovered or went away before a decision saw them again.
func (m *Memory) Sweep() {
	m.mu.Lock()
	now := m.clock.Now()
	stale := func(st rules.DoubtHold) bool { return now.Sub(st.Touched) > StaleHold && !canaryPending(st, now) }
	for k, r := range m.holds.byKey {
		if stale(r.Hold) && !m.instances.heldIn(k) {
			m.holds.end(k)
		}
	}
	changed := m.holds.take()
	m.mu.Unlock()
	m.tellHolds(changed)
}

// Load puts the holds kept in the API back into the memory (a manager start, a new leader), as
// seen now: they go on where they were, on the same clock.
func (m *Memory) Load(records []HoldRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	for _, r := range records {
		r.Hold.Touched = now
		m.holds.byKey[r.Key] = &r
	}
}

// Record returns the key's hold as its record in the API should be; false when it has none (its
// record should be gone).
func (m *Memory) Record(k rules.HoldKey) (HoldRecord, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.holds.byKey[k]
	if !ok {
		return HoldRecord{}, false
	}
	out := *r
	out.Hold = r.Hold.Durable()
	return out, true
}
