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
}

type turn struct {
	key types.NamespacedName
	uid types.UID
}

// recallStop returns the result of a stop this process already made for the request's instance.
func (m *memory) recallStop(crr *appsv1alpha1.ContainerRecreateRequest, instance string) (stopResult, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.stops[client.ObjectKeyFromObject(crr)]
	if sm == nil || sm.uid != crr.UID {
		return stopResult{}, false
	}
	r, ok := sm.results[instance]
	return r, ok
}

func (m *memory) rememberStop(crr *appsv1alpha1.ContainerRecreateRequest, instance string, r stopResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := client.ObjectKeyFromObject(crr)
	if m.stops == nil {
		m.stops = map[types.NamespacedName]*stopMemory{}
	}
	if sm := m.stops[key]; sm == nil || sm.uid != crr.UID {
		m.stops[key] = &stopMemory{uid: crr.UID, results: map[string]stopResult{}}
	}
	m.stops[key].results[instance] = r
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

func (m *memory) takeTurn(podUID types.UID, crr *appsv1alpha1.ContainerRecreateRequest) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.turns == nil {
		m.turns = map[types.UID]turn{}
	}
	m.turns[podUID] = turn{key: client.ObjectKeyFromObject(crr), uid: crr.UID}
}

// turnHolder reports whether crr holds its pod's turn, or names another request that does and
// is, read fresh from the apiserver, still active and unfinished ("" when none does).
func (e *Executor) turnHolder(ctx context.Context, podUID types.UID, crr *appsv1alpha1.ContainerRecreateRequest) (other string, mine bool) {
	e.mu.Lock()
	t, ok := e.turns[podUID]
	e.mu.Unlock()
	if !ok {
		return "", false
	}
	if t.uid == crr.UID {
		return "", true
	}
	held := &appsv1alpha1.ContainerRecreateRequest{}
	err := e.APIReader.Get(ctx, t.key, held)
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return t.key.Name, false // cannot tell: keep waiting rather than run two at once
	case err == nil && held.UID == t.uid && e.owns(held) && !IsFinished(held.Status.Phase) && held.DeletionTimestamp == nil:
		return held.Name, false
	}
	e.forget(t.key)
	return "", false
}
