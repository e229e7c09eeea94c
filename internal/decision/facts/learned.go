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

package facts

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// learned remember the workload the decision resolved for a pod and for its controller (e.g.
// its ReplicaSet), so that an event on a pod or on its controller can wake the held pods of the
// same workload without resolving it again.
type learned struct {
	mu      sync.Mutex
	byPod   map[types.UID]rules.WorkloadKey
	byOwner map[types.UID]rules.WorkloadKey
}

func newLearned() *learned {
	return &learned{byPod: map[types.UID]rules.WorkloadKey{}, byOwner: map[types.UID]rules.WorkloadKey{}}
}

// learn records the workload of a pod and of its controller (owner may be empty).
func (w *learned) learn(pod, owner types.UID, key rules.WorkloadKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byPod[pod] = key
	if owner != "" {
		w.byOwner[owner] = key
	}
}

// of returns the workload learned for a pod UID or a controller UID.
func (w *learned) of(uid types.UID) (rules.WorkloadKey, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k, ok := w.byPod[uid]; ok {
		return k, true
	}
	k, ok := w.byOwner[uid]
	return k, ok
}

// forgetPod drops what was learned for a pod that is gone.
func (w *learned) forgetPod(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byPod, uid)
}

// forgetOwner drops what was learned for a controller that is gone (a ReplicaSet of an old
// rollout), so the memo does not grow across rollouts.
func (w *learned) forgetOwner(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byOwner, uid)
}
