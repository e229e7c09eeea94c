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

// Package restarts is the decision controller's memory between reconciles: the restarts it
// created and has not seen finished (Expectations), the restarts it holds (Holds, indexed by pod,
// workload, node and namespace), what it decided per policy (Counters), and the workload of each
// pod it resolved (Workloads); and, for the policy-status controller, the workload each
// controller reference resolves to (Resolutions). It is lost on a manager restart or leader
// change: expectations are then rebuilt from the cache, held decisions are recorded again once,
// and counters start from zero (the policy status keeps the totals).
package restarts

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Expectations remember the restarts (ContainerRecreateRequests) the controller created until its
// cache shows them finished or deleted, so that the budget holds under cache lag: shaped like the
// Kubernetes controllers' expectations, with ExpectCreation when creating, CreationObserved when
// the cache shows the request finished or gone (or the create failed), and Pending in between.
// An expectation older than its TTL no longer counts: the cache alone decides then (it only
// matters if a watch event is lost).
type Expectations struct {
	clock clock.PassiveClock
	ttl   time.Duration

	mu    sync.Mutex
	byPod map[types.UID]expectation
}

type expectation struct {
	name string
	at   time.Time
}

// NewExpectations returns empty expectations whose entries count for ttl.
func NewExpectations(c clock.PassiveClock, ttl time.Duration) *Expectations {
	return &Expectations{clock: c, ttl: ttl, byPod: map[types.UID]expectation{}}
}

// ExpectCreation records a request about to be created for the pod.
func (e *Expectations) ExpectCreation(pod types.UID, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byPod[pod] = expectation{name: name, at: e.clock.Now()}
}

// CreationObserved ends the expectation of the named request: the cache shows it finished or
// deleted, or its creation failed. An expectation of another request of the pod is kept.
func (e *Expectations) CreationObserved(pod types.UID, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byPod[pod]; ok && x.name == name {
		delete(e.byPod, pod)
	}
}

// Pending reports whether a request created for the pod may still be running as far as the
// controller knows. It only reads.
func (e *Expectations) Pending(pod types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.byPod[pod]
	return ok && e.clock.Since(x.at) <= e.ttl
}

// Delete forgets the pod (it is gone), and every expectation past its TTL.
func (e *Expectations) Delete(pod types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byPod, pod)
	for uid, x := range e.byPod {
		if e.clock.Since(x.at) > e.ttl {
			delete(e.byPod, uid)
		}
	}
}
