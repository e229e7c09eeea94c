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

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestExpectations(t *testing.T) {
	type step struct {
		op          string // expect, observe, delete, wait
		pod, name   string
		wait        time.Duration
		wantPending map[string]bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"created, then seen finished", []step{
			{op: "expect", pod: "a", name: "r1", wantPending: map[string]bool{"a": true, "b": false}},
			{op: "observe", pod: "a", name: "r1", wantPending: map[string]bool{"a": false}},
		}},
		{"an older request seen finished leaves the newer expectation", []step{
			{op: "expect", pod: "a", name: "r1"},
			{op: "expect", pod: "a", name: "r2"},
			{op: "observe", pod: "a", name: "r1", wantPending: map[string]bool{"a": true}},
			{op: "observe", pod: "a", name: "r2", wantPending: map[string]bool{"a": false}},
		}},
		{"expires after its TTL", []step{
			{op: "expect", pod: "a", name: "r1"},
			{op: "wait", wait: 2 * time.Minute, wantPending: map[string]bool{"a": true}},
			{op: "wait", wait: time.Second, wantPending: map[string]bool{"a": false}},
		}},
		{"delete forgets the pod and expired entries", []step{
			{op: "expect", pod: "a", name: "r1"},
			{op: "wait", wait: 3 * time.Minute},
			{op: "expect", pod: "b", name: "r2"},
			{op: "delete", pod: "b", wantPending: map[string]bool{"a": false, "b": false}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
			e := newExpectations(clk, 2*time.Minute)
			for i, s := range tc.steps {
				switch s.op {
				case "expect":
					e.expect(types.UID(s.pod), s.name)
				case "observe":
					e.observed(types.UID(s.pod), s.name)
				case "delete":
					e.forget(types.UID(s.pod))
				case "wait":
					clk.SetTime(clk.Now().Add(s.wait))
				}
				for pod, want := range s.wantPending {
					if got := e.pending(types.UID(pod)); got != want {
						t.Fatalf("step %d: pending(%s) = %v, want %v", i, pod, got, want)
					}
				}
			}
			if tc.name == "delete forgets the pod and expired entries" && len(e.byPod) != 0 {
				t.Fatalf("entries left: %v", e.byPod)
			}
		})
	}
}
