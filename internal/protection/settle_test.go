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
	"testing"
	"time"
)

func TestStormSettler(t *testing.T) {
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
			s := &StormSettler[string]{Settle: tt.settle}
			for i, st := range tt.steps {
				settlingBefore := s.Settling(st.key, t0.Add(st.at))
				if got := s.Observe(st.key, st.storm, t0.Add(st.at)); got != st.want {
					t.Fatalf("step %d (%+v): held for %v, want %v", i, st, got, st.want)
				}
				// Settling only reads: before a step that ends a storm it already says how long is left.
				if !st.storm && settlingBefore != st.want {
					t.Fatalf("step %d (%+v): Settling = %v, want %v", i, st, settlingBefore, st.want)
				}
			}
		})
	}
	var nilSettler *StormSettler[string]
	if got := nilSettler.Observe("w", true, t0); got != 0 || nilSettler.Settling("w", t0) != 0 {
		t.Fatalf("nil settler held for %v", got)
	}
}
