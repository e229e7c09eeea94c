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

package recreate

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// memory is what the executor process knows better than its cache, which can lag behind its own
// writes: the stops it made, and which request of each pod holds the turn.
type memory struct {
	mu sync.Mutex
	// stops, per request and container instance, so that a step planned from a status that lags
	// behind a stop records its result instead of stopping again.
	stops map[types.NamespacedName]*stopMemory
	// turns: pod UID -> the request running on it, so that a second request of the pod never
	// starts while the cache does not show the first as Recreating yet.
	turns map[types.UID]turn
}

type stopMemory struct {
	uid types.UID
	// seen is when this process first saw the request, on its own clock.
	seen    time.Time
	results map[string]stopResult // by container instance
	// running: stops started and not returned yet, by container instance.
	running map[string]bool
}

type turn struct {
	key types.NamespacedName
	uid types.UID
}

// stopMemoryOf returns the memory of the request, reset when the request was re-created under
// the same name (new UID). Callers hold mu.
func (m *memory) stopMemoryOf(crr *appsv1alpha1.ContainerRecreateRequest) *stopMemory {
	key := client.ObjectKeyFromObject(crr)
	if m.stops == nil {
		m.stops = map[types.NamespacedName]*stopMemory{}
	}
	sm := m.stops[key]
	if sm == nil || sm.uid != crr.UID {
		sm = &stopMemory{uid: crr.UID, results: map[string]stopResult{}, running: map[string]bool{}}
		m.stops[key] = sm
	}
	return sm
}

// firstSeen returns when this process first saw the request, on its own clock: now, the first
// time. The request's creationTimestamp is the API server's clock, which the node's may be far
// from; the daemon judges the request's age on its own clock only.
func (m *memory) firstSeen(crr *appsv1alpha1.ContainerRecreateRequest, now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stopMemoryOf(crr)
	if sm.seen.IsZero() {
		sm.seen = now
	}
	return sm.seen
}

// stopsOf returns a copy of what is remembered of the request's stops, by container instance.
func (m *memory) stopsOf(crr *appsv1alpha1.ContainerRecreateRequest) map[string]stopMemo {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stopMemoryOf(crr)
	out := make(map[string]stopMemo, len(sm.running)+len(sm.results))
	for id := range sm.running {
		out[id] = stopMemo{running: true}
	}
	for id, r := range sm.results {
		out[id] = stopMemo{result: &r}
	}
	return out
}

// beginStop marks a stop of the request's instance as running, unless one runs already or has a
// result waiting; it reports whether the caller must start it.
func (m *memory) beginStop(crr *appsv1alpha1.ContainerRecreateRequest, instance string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stopMemoryOf(crr)
	if _, done := sm.results[instance]; done || sm.running[instance] {
		return false
	}
	sm.running[instance] = true
	return true
}

// endStop records what a stop returned.
func (m *memory) endStop(crr *appsv1alpha1.ContainerRecreateRequest, instance string, r stopResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stops[client.ObjectKeyFromObject(crr)]
	if sm == nil || sm.uid != crr.UID {
		return // the request finished or went away meanwhile: forgotten
	}
	delete(sm.running, instance)
	sm.results[instance] = r
}

// recorded drops the results of the request's stops that its status now records, so that the
// next attempt can run. A stop that went through stays remembered: a step planned from a status
// that lags behind it records it instead of stopping again.
func (m *memory) recorded(crr *appsv1alpha1.ContainerRecreateRequest, instances []string) {
	if len(instances) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stopMemoryOf(crr)
	for _, id := range instances {
		if r, ok := sm.results[id]; ok && r.outcome != stopped {
			delete(sm.results, id)
		}
	}
}

// forget drops what is remembered about a request that finished or went away.
func (m *memory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.stops, key)
	for pod, t := range m.turns {
		if t.key == key {
			delete(m.turns, pod)
		}
	}
}

// stopMemo is what the executor remembers of its own stop of one container instance: running,
// or returned with a result. Its cache can lag behind its own writes, so this, not the request's
// status, says whether a stop already happened.
type stopMemo struct {
	running bool
	result  *stopResult
}

// stopResult is what a stop returned, and when.
type stopResult struct {
	outcome stopOutcome
	message string
	at      time.Time
}

// stopOutcome says how a stop ended.
type stopOutcome int

const (
	stopped stopOutcome = iota
	alreadyStopped
	stopFailed
	// stopRetry: the runtime answered with a transient error (busy, restarting, timed out); the
	// container keeps its turn and is stopped again after transientRetryDelay, until the deadline.
	stopRetry
)

// transientRetryDelay is the pause before stopping again after a transient runtime error.
const transientRetryDelay = time.Second
