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
	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// waits records the container instances whose last decision was Wait, indexed by workload: a
// Wait is decided again on its requeue, and sooner when something happens in its workload (a
// sibling's first probe result ends the wait for a new revision's evidence).
type waits struct {
	byPod      map[types.NamespacedName]map[rules.Instance]rules.WorkloadKey
	byWorkload map[rules.WorkloadKey]map[types.NamespacedName]struct{}
}

func newWaits() *waits {
	return &waits{byPod: map[types.NamespacedName]map[rules.Instance]rules.WorkloadKey{},
		byWorkload: map[rules.WorkloadKey]map[types.NamespacedName]struct{}{}}
}

// record remembers that the instance waits in workload w.
func (s *waits) record(pod types.NamespacedName, inst rules.Instance, w rules.WorkloadKey) {
	s.unindex(pod)
	if s.byPod[pod] == nil {
		s.byPod[pod] = map[rules.Instance]rules.WorkloadKey{}
	}
	s.byPod[pod][inst] = w
	s.index(pod)
}

// retain keeps the waits of the instances for which keep is true.
func (s *waits) retain(pod types.NamespacedName, keep func(rules.Instance) bool) {
	if _, ok := s.byPod[pod]; !ok {
		return
	}
	s.unindex(pod)
	for inst := range s.byPod[pod] {
		if !keep(inst) {
			delete(s.byPod[pod], inst)
		}
	}
	if len(s.byPod[pod]) == 0 {
		delete(s.byPod, pod)
	}
	s.index(pod)
}

// release forgets the wait of one instance (decided otherwise since).
func (s *waits) release(pod types.NamespacedName, inst rules.Instance) {
	s.retain(pod, func(i rules.Instance) bool { return i != inst })
}

func (s *waits) inWorkload(w rules.WorkloadKey) []types.NamespacedName { return keys(s.byWorkload[w]) }

func (s *waits) index(pod types.NamespacedName) {
	for _, w := range s.byPod[pod] {
		add(s.byWorkload, w, pod)
	}
}

func (s *waits) unindex(pod types.NamespacedName) {
	for _, w := range s.byPod[pod] {
		remove(s.byWorkload, w, pod)
	}
}
