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

package rules

import (
	"slices"
)

// Step 4: one restart per pod at a time; several failed containers of one pod are restarted one
// after the other.

func oneAtATime(c *judged) (Verdict, bool) {
	if c.self.ActiveCRR {
		return Verdict{Outcome: Wait, Message: "the pod already has an active restart"}, true
	}
	return Verdict{}, false
}

// expectRequests counts as active the requests the memory expects: created by an earlier
// decision, not yet in the cache or not yet seen finished there. So the budget holds under cache
// lag and concurrent decisions. An expected request the cache shows finished is over: the
// memory is told (Seen.Finished).
func expectRequests(c *judged) {
	expected := func(p PodState) bool {
		name, ok := c.m.Expected(p.UID)
		if !ok {
			return false
		}
		if !slices.Contains(p.Finished, name) {
			return true
		}
		if r := (ExpectedRequest{Pod: p.UID, Name: name}); !slices.Contains(c.seen.Finished, r) {
			c.seen.Finished = append(c.seen.Finished, r)
		}
		return false
	}
	c.workload = c.f.Workload.Expecting(expected).For(c.x.Container)
	c.self = c.f.Self.For(c.x.Container)
	if c.f.Self.Containers != nil {
		// Its siblings count toward its storms when their failures began with this container's.
		c.workload.Onset = c.self.Onset
	}
	if expected(c.self) {
		c.self.ActiveCRR = true
	}
}

// Expecting returns the workload with the pods for which expected is true counted as having an
// active request.
func (w WorkloadState) Expecting(expected func(PodState) bool) WorkloadState {
	out := w
	out.Pods = make([]PodState, len(w.Pods))
	for i, p := range w.Pods {
		if expected(p) {
			p.ActiveCRR = true
		}
		out.Pods[i] = p
	}
	return out
}
