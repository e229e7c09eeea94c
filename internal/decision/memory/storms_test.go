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
	"testing"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// The settle timers of the storm rules, as decisions move them: the rules say how long is left
// (rules.Settling), the memory keeps when each storm was last seen.
func TestStormSettling(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at    time.Duration // since t0
		key   string
		storm bool
		want  time.Duration
	}
	tests := []struct {
		name   string
		settle time.Duration
		steps  []step
	}{
		{name: "never in a storm", settle: 30 * time.Second, steps: []step{
			{0, "w", false, 0}, {time.Minute, "w", false, 0},
		}},
		{name: "held for settle after the storm was last seen", settle: 30 * time.Second, steps: []step{
			{0, "w", true, 30 * time.Second},
			{10 * time.Second, "w", true, 30 * time.Second}, // still in it: the clock restarts
			{15 * time.Second, "w", false, 25 * time.Second},
			{39 * time.Second, "w", false, time.Second},
			{40 * time.Second, "w", false, 0},
			{41 * time.Second, "w", false, 0}, // forgotten
		}},
		{name: "a new storm while settling starts over", settle: 30 * time.Second, steps: []step{
			{0, "w", true, 30 * time.Second},
			{20 * time.Second, "w", false, 10 * time.Second},
			{25 * time.Second, "w", true, 30 * time.Second},
			{50 * time.Second, "w", false, 5 * time.Second},
		}},
		{name: "keys are independent", settle: 30 * time.Second, steps: []step{
			{0, "a", true, 30 * time.Second},
			{5 * time.Second, "b", false, 0},
			{5 * time.Second, "a", false, 25 * time.Second},
		}},
		{name: "zero settle is off", settle: 0, steps: []step{
			{0, "w", true, 0}, {time.Second, "w", false, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := timers[string]{}
			for i, st := range tt.steps {
				now := t0.Add(st.at)
				last, seen := s.last(st.key)
				settlingBefore, _ := rules.Settling(false, last, seen, tt.settle, now)
				got, mark := rules.Settling(st.storm, last, seen, tt.settle, now)
				s.mark(st.key, mark, now)
				if got != st.want {
					t.Fatalf("step %d (%+v): held for %v, want %v", i, st, got, st.want)
				}
				// Read alone (the policy status), it already says how long is left before a step that
				// ends a storm.
				if !st.storm && settlingBefore != st.want {
					t.Fatalf("step %d (%+v): settling = %v, want %v", i, st, settlingBefore, st.want)
				}
			}
			if _, kept := s.last("w"); kept && tt.name == "held for settle after the storm was last seen" {
				t.Fatal("a settled storm is forgotten")
			}
		})
	}
}
