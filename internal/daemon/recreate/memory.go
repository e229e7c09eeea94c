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
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	uid     types.UID
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

// startStop marks a stop of the request's instance as running, unless one runs already or has
// a result waiting; it reports whether the caller must start it.
func (m *memory) startStop(crr *appsv1alpha1.ContainerRecreateRequest, instance string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stopMemoryOf(crr)
	if _, done := sm.results[instance]; done || sm.running[instance] {
		return false
	}
	sm.running[instance] = true
	return true
}

// stopStarted reports whether a stop of the request's instance has started (it may have
// returned since).
func (m *memory) stopStarted(crr *appsv1alpha1.ContainerRecreateRequest, instance string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stopMemoryOf(crr)
	_, done := sm.results[instance]
	return done || sm.running[instance]
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

// takeStop returns the result of a stop that returned. A stop that went through stays remembered,
// so that a step planned from a status that lags behind it records it instead of stopping again;
// any other result is handed out once, so that the next attempt can run.
func (m *memory) takeStop(crr *appsv1alpha1.ContainerRecreateRequest, instance string) (stopResult, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stopMemoryOf(crr)
	r, ok := sm.results[instance]
	if ok && r.outcome != stopped {
		delete(sm.results, instance)
	}
	return r, ok
}

// stopOf returns what the stop of the request's instance returned, without handing it out, and
// whether one is still running.
func (m *memory) stopOf(crr *appsv1alpha1.ContainerRecreateRequest, instance string) (r stopResult, returned, running bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stopMemoryOf(crr)
	r, returned = sm.results[instance]
	return r, returned, sm.running[instance]
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

// claimTurn gives crr its pod's turn and returns "", or names the request that has to finish
// first: one that holds the turn in this process and is, read fresh from the apiserver, still
// active and unfinished; else the one the cache says is next (nextInCache, "" if crr). The turn
// is checked and taken under one lock, so two workers never both take it.
func (e *Executor) claimTurn(ctx context.Context, podUID types.UID, crr *appsv1alpha1.ContainerRecreateRequest, nextInCache string) string {
	e.mu.Lock()
	t, held := e.turns[podUID]
	e.mu.Unlock()
	if held && t.uid != crr.UID {
		if name := e.stillRunning(ctx, t); name != "" {
			return name
		}
		e.mu.Lock()
		if e.turns[podUID] == t {
			delete(e.turns, podUID)
		}
		e.mu.Unlock()
	}
	mine := held && t.uid == crr.UID
	if !mine && nextInCache != "" {
		return nextInCache
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if cur, ok := e.turns[podUID]; ok && cur.uid != crr.UID {
		return cur.key.Name // another worker took it meanwhile
	}
	if e.turns == nil {
		e.turns = map[types.UID]turn{}
	}
	e.turns[podUID] = turn{key: client.ObjectKeyFromObject(crr), uid: crr.UID}
	return ""
}

// stillRunning returns the name of the turn's request if it is still active and unfinished.
func (e *Executor) stillRunning(ctx context.Context, t turn) string {
	held := &appsv1alpha1.ContainerRecreateRequest{}
	err := e.APIReader.Get(ctx, t.key, held)
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return t.key.Name // cannot tell: keep waiting rather than run two at once
	case err == nil && held.UID == t.uid && e.owns(held) && held.Active():
		return held.Name
	}
	return ""
}
