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

package protection

import (
	"sync"
	"time"
)

// StormSettler gives the failure-storm breaker hysteresis: a workload (or node) stays held for
// Settle after it was last seen in a storm. Without it, pods that recover a probe period apart
// make the failing count drop below maxFailing while some of them are still failing, and those
// would be restarted at once although they were about to recover too. K is the key type: a
// WorkloadKey, or a node name.
type StormSettler[K comparable] struct {
	// Settle is how long the failing count must stay within the limit before restarts resume;
	// zero or less turns the hysteresis off.
	Settle time.Duration

	mu   sync.Mutex
	last map[K]time.Time
}

// Observe records whether key is in a storm at now and returns how much longer its restarts stay
// held by the storm: Settle while it is in one, what is left of Settle after it was last seen in
// one, and zero once that has passed. Only the decision controller observes.
func (s *StormSettler[K]) Observe(key K, storm bool, now time.Time) time.Duration {
	if s == nil || s.Settle <= 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if storm {
		if s.last == nil {
			s.last = map[K]time.Time{}
		}
		s.last[key] = now
		return s.Settle
	}
	t, ok := s.last[key]
	if !ok {
		return 0
	}
	if left := t.Add(s.Settle).Sub(now); left > 0 {
		return left
	}
	delete(s.last, key) // settled: forget it, so the map does not grow
	return 0
}

// Settling returns what is left of the settle period of the last storm observed for key, without
// recording anything: for readers such as the policy-status controller.
func (s *StormSettler[K]) Settling(key K, now time.Time) time.Duration {
	if s == nil || s.Settle <= 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.last[key]
	if !ok {
		return 0
	}
	return max(t.Add(s.Settle).Sub(now), 0)
}
