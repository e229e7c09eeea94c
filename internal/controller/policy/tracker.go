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

package policy

import (
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

// expectationTTL bounds how long a created request counts as active on the controller's word
// alone. Past it the cache decides (an active request is still counted from there); it only
// matters if a watch event is lost.
const expectationTTL = 2 * time.Minute

// tracker is the in-memory state the decision controller keeps between reconciles and shares with
// the policy-status controller. It is lost on a manager restart: expectations are then rebuilt
// from the cache, held decisions are recorded again once (an event and a count each), and
// token buckets start full.
type tracker struct {
	mu    sync.Mutex
	clock clock.PassiveClock

	// expected: requests this controller created, by pod UID, until the cache shows them finished
	// or deleted. Keeping them until then, not only until the cache first shows them, means a
	// restart stays counted against the budget even if a later read misses the request.
	expected map[types.UID]expectation
	// holds: the last hold reason recorded per pod, per container instance (container/containerID).
	holds map[types.NamespacedName]map[string]podHold
	// counts: decisions not yet added to each policy's status, by policy key.
	counts map[string]*policyCounts
	// podWorkload and ownerWorkload remember workload keys learned while deciding, so that an
	// event on one pod (or its ReplicaSet) can wake the held pods of the same workload.
	podWorkload   map[types.UID]string
	ownerWorkload map[types.UID]string
	// storms remembers recent failure storms per workload and node (hysteresis); it has its own lock.
	storms *protection.StormSettler
	// statusDirty wakes the policy-status controller for a policy.
	statusDirty chan event.GenericEvent
}

type expectation struct {
	crrName string
	at      time.Time
}

type podHold struct {
	reason   protection.Reason
	workload string
	node     string
	policies []string
}

type policyCounts struct {
	requested   int64
	held        map[protection.Reason]int64
	lastRestart time.Time
}

func newTracker(c clock.PassiveClock) *tracker {
	return &tracker{
		clock:         c,
		expected:      map[types.UID]expectation{},
		holds:         map[types.NamespacedName]map[string]podHold{},
		counts:        map[string]*policyCounts{},
		podWorkload:   map[types.UID]string{},
		ownerWorkload: map[types.UID]string{},
		statusDirty:   make(chan event.GenericEvent, 1024),
	}
}

// expect records a request about to be created for the pod.
func (t *tracker) expect(pod types.UID, crrName string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expected[pod] = expectation{crrName: crrName, at: t.clock.Now()}
}

// finished is called when the cache shows a request finished, or it is deleted: the restart no
// longer counts on the controller's word.
func (t *tracker) finished(pod types.UID, crrName string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.expected[pod]; ok && e.crrName == crrName {
		delete(t.expected, pod)
	}
}

// createFailed drops an expectation whose create did not happen.
func (t *tracker) createFailed(pod types.UID, crrName string) { t.finished(pod, crrName) }

// isExpected reports whether a request this controller created for the pod may still be active.
func (t *tracker) isExpected(pod types.UID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.expected[pod]
	if ok && t.clock.Since(e.at) > expectationTTL {
		delete(t.expected, pod)
		return false
	}
	return ok
}

// recordHold remembers the hold and reports whether it is a transition (new container instance
// or new reason) that must be recorded as an event and counted.
func (t *tracker) recordHold(pod types.NamespacedName, instance string, h podHold) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.holds[pod]
	if m == nil {
		m = map[string]podHold{}
		t.holds[pod] = m
	}
	prev, ok := m[instance]
	m[instance] = h
	if ok && prev.reason == h.reason {
		return false
	}
	for _, k := range h.policies {
		c := t.countsFor(k)
		c.held[h.reason]++
	}
	return true
}

// recordRestart counts a created request and clears the instance's hold.
func (t *tracker) recordRestart(pod types.NamespacedName, instance string, policies []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m := t.holds[pod]; m != nil {
		delete(m, instance)
	}
	for _, k := range policies {
		c := t.countsFor(k)
		c.requested++
		c.lastRestart = t.clock.Now()
	}
}

// clearHolds forgets the holds of a pod's container instances that are no longer failing
// (keep lists the ones that still are); nil forgets the pod entirely.
func (t *tracker) clearHolds(pod types.NamespacedName, keep map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.holds[pod]
	for inst := range m {
		if !keep[inst] {
			delete(m, inst)
		}
	}
	if len(m) == 0 {
		delete(t.holds, pod)
	}
}

// heldReasons returns the current hold reason per workload key ("" when none), the worst
// (first in decision order) if the workload's pods are held for several.
func (t *tracker) heldReasons() map[string]protection.Reason {
	t.mu.Lock()
	defer t.mu.Unlock()
	rank := map[protection.Reason]int{}
	for i, r := range protection.AllReasons {
		rank[r] = i
	}
	out := map[string]protection.Reason{}
	for _, m := range t.holds {
		for _, h := range m {
			if cur, ok := out[h.workload]; !ok || rank[h.reason] < rank[cur] {
				out[h.workload] = h.reason
			}
		}
	}
	return out
}

func (t *tracker) countsFor(key string) *policyCounts {
	c := t.counts[key]
	if c == nil {
		c = &policyCounts{held: map[protection.Reason]int64{}}
		t.counts[key] = c
	}
	return c
}

// takeCounts hands the pending counts of a policy to the status writer, which adds them to the
// status; on a failed write it gives them back with putBack.
func (t *tracker) takeCounts(key string) *policyCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.counts[key]
	delete(t.counts, key)
	return c
}

func (t *tracker) putBack(key string, c *policyCounts) {
	if c == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.countsFor(key)
	cur.requested += c.requested
	for r, n := range c.held {
		cur.held[r] += n
	}
	if c.lastRestart.After(cur.lastRestart) {
		cur.lastRestart = c.lastRestart
	}
}

// markDirty asks the status controller to refresh a policy's status soon. It never blocks: when
// the channel is full the periodic resync picks the change up.
func (t *tracker) markDirty(keys []string) {
	for _, k := range keys {
		if k == protection.DefaultPolicyKey {
			continue
		}
		ns, name, _ := strings.Cut(k, "/")
		ev := event.GenericEvent{Object: &policyv1alpha1.EnhancedLivenessPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}
		select {
		case t.statusDirty <- ev:
		default:
		}
	}
}

// learnWorkload remembers the workload of a pod and of its controller (e.g. its ReplicaSet).
func (t *tracker) learnWorkload(pod, owner types.UID, workload string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.podWorkload[pod] = workload
	if owner != "" {
		t.ownerWorkload[owner] = workload
	}
}

// forgetPod drops what is known about a pod that is gone.
func (t *tracker) forgetPod(key types.NamespacedName, uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.holds, key)
	if uid != "" {
		delete(t.podWorkload, uid)
		delete(t.expected, uid)
	}
}

// forgetOwner drops the workload learned for a controller (a deleted ReplicaSet).
func (t *tracker) forgetOwner(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.ownerWorkload, uid)
}

// workloadOf returns the workload key learned for a pod UID or a controller UID.
func (t *tracker) workloadOf(uid types.UID) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w, ok := t.podWorkload[uid]; ok {
		return w, true
	}
	w, ok := t.ownerWorkload[uid]
	return w, ok
}

// heldPods returns the pods with a recorded hold that match: in workload w (when w != ""), on
// node n (when n != ""), or in namespace ns (when ns != ""). Any one match is enough.
func (t *tracker) heldPods(w, n, ns string) []types.NamespacedName {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []types.NamespacedName
	for key, m := range t.holds {
		for _, h := range m {
			if (w != "" && h.workload == w) || (n != "" && h.node == n) || (ns != "" && key.Namespace == ns) {
				out = append(out, key)
				break
			}
		}
	}
	return out
}
