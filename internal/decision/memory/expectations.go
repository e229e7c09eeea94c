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

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// expectations remember the requests (ContainerRecreateRequests) the decision created until the
// cache shows them finished or deleted, so that the budget holds under cache lag: shaped like the
// Kubernetes controllers' expectations, with expect when creating, observed when the cache shows
// the request finished or gone (or the create failed), and pending in between. An expectation
// older than its TTL no longer counts: the cache alone decides then (it only matters if a watch
// event is lost).
type expectations struct {
	clock clock.PassiveClock
	ttl   time.Duration
	byPod map[types.UID]expectation
}

type expectation struct {
	name string
	at   time.Time
}

func newExpectations(c clock.PassiveClock, ttl time.Duration) *expectations {
	return &expectations{clock: c, ttl: ttl, byPod: map[types.UID]expectation{}}
}

// expect records a request about to be created for the pod.
func (e *expectations) expect(pod types.UID, name string) {
	e.byPod[pod] = expectation{name: name, at: e.clock.Now()}
}

// observed ends the expectation of the named request: the cache shows it finished or deleted, or
// its creation failed. An expectation of another request of the pod is kept.
func (e *expectations) observed(pod types.UID, name string) {
	if x, ok := e.byPod[pod]; ok && x.name == name {
		delete(e.byPod, pod)
	}
}

// expected returns the request created for the pod that may still be running as far as the
// decision knows.
func (e *expectations) expected(pod types.UID) (string, bool) {
	x, ok := e.byPod[pod]
	if !ok || e.clock.Since(x.at) > e.ttl {
		return "", false
	}
	return x.name, true
}

// pending reports whether a request created for the pod may still be running.
func (e *expectations) pending(pod types.UID) bool {
	_, ok := e.expected(pod)
	return ok
}

// forget forgets the pod (it is gone), and every expectation past its TTL.
func (e *expectations) forget(pod types.UID) {
	delete(e.byPod, pod)
	for uid, x := range e.byPod {
		if e.clock.Since(x.at) > e.ttl {
			delete(e.byPod, uid)
		}
	}
}
