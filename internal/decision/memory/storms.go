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

// timers are the settle timers of the storm rules: when each workload (or node) was last seen in
// a storm (rules.Settling). K is a WorkloadKey, or a node name.
type timers[K comparable] map[K]time.Time

// last returns when key was last seen in a storm.
func (t timers[K]) last(key K) (time.Time, bool) {
	at, ok := t[key]
	return at, ok
}

// mark applies what a decision saw of key's storm at at.
func (t timers[K]) mark(key K, m rules.StormMark, at time.Time) {
	switch m {
	case rules.StormSeen:
		t[key] = at
	case rules.StormSettled:
		delete(t, key) // settled: forget it, so the map does not grow
	}
}
