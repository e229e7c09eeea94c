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

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// firstSeen remembers when a decision first saw each container instance's failure, on the
// manager's clock: how long a failure has lasted is never read from the node's clock.
type firstSeen map[types.NamespacedName]map[rules.Instance]time.Time

func (f firstSeen) of(pod types.NamespacedName, inst rules.Instance) (time.Time, bool) {
	t, ok := f[pod][inst]
	return t, ok
}

// see records the first sight of the instance's failure.
func (f firstSeen) see(pod types.NamespacedName, inst rules.Instance, at time.Time) {
	m := f[pod]
	if m == nil {
		m = map[rules.Instance]time.Time{}
		f[pod] = m
	}
	if _, ok := m[inst]; !ok {
		m[inst] = at
	}
}

// retain keeps the failures of the instances for which keep is true.
func (f firstSeen) retain(pod types.NamespacedName, keep func(rules.Instance) bool) {
	for inst := range f[pod] {
		if !keep(inst) {
			delete(f[pod], inst)
		}
	}
	if len(f[pod]) == 0 {
		delete(f, pod)
	}
}
