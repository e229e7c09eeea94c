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

package notice

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A state is told once it has lasted the grace, then every interval; a new reason starts over;
// a pod no longer seen is forgotten, so a state that comes back waits out the grace again.
func TestTracker(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	tr := New(time.Minute, 5*time.Minute)
	for _, step := range []struct {
		name string
		at   time.Duration
		seen map[types.UID]string
		want []Due
	}{
		{"first seen: within the grace", 0, map[types.UID]string{"a": "NotProbed"}, nil},
		{"still within the grace", 30 * time.Second, map[types.UID]string{"a": "NotProbed"}, nil},
		{"grace over: told", 60 * time.Second, map[types.UID]string{"a": "NotProbed"}, []Due{{"a", "NotProbed", time.Minute}}},
		{"told a minute ago: quiet", 2 * time.Minute, map[types.UID]string{"a": "NotProbed"}, nil},
		{"interval over: told again", 6 * time.Minute, map[types.UID]string{"a": "NotProbed"}, []Due{{"a", "NotProbed", 6 * time.Minute}}},
		{"new reason: grace again", 7 * time.Minute, map[types.UID]string{"a": "NotMapped"}, nil},
		{"new reason told after its grace", 8 * time.Minute, map[types.UID]string{"a": "NotMapped"}, []Due{{"a", "NotMapped", time.Minute}}},
		{"probed again: forgotten", 9 * time.Minute, nil, nil},
		{"back: grace again", 10 * time.Minute, map[types.UID]string{"a": "NotMapped"}, nil},
	} {
		got := tr.Observe(t0.Add(step.at), step.seen)
		if len(got) != len(step.want) || (len(got) == 1 && got[0] != step.want[0]) {
			t.Fatalf("%s: due %v, want %v", step.name, got, step.want)
		}
	}
}
