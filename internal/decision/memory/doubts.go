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

// doubts are the workloads' doubt holds (rules.BoundDoubt): since when, for how long, and the
// canary in flight.
type doubts map[rules.WorkloadKey]rules.DoubtHold

func (d doubts) of(w rules.WorkloadKey) (rules.DoubtHold, bool) {
	h, ok := d[w]
	return h, ok
}

// seen records what a decision saw of the workload's doubt hold.
func (d doubts) seen(w rules.WorkloadKey, s rules.Seen) {
	switch {
	case s.DoubtEnded:
		delete(d, w)
	case s.Doubt != nil:
		d[w] = *s.Doubt
	}
}

// canary remembers the restart decided as the workload's canary: no other pod of it is released
// until the canary is judged.
func (d doubts) canary(dec rules.Decision, at time.Time) {
	h, ok := d[dec.Workload]
	if !ok {
		return
	}
	x := dec.Failure
	h.Canary = &rules.Canary{Pod: dec.UID, PodName: dec.Pod.Name, Container: x.Container, Instance: x.ContainerID,
		At: at, Deadline: rules.CanaryDeadline(at, x.Grace, dec.Soon)}
	d[dec.Workload] = h
}

// withdrawn forgets a canary whose request was not created: another held pod may go instead.
func (d doubts) withdrawn(dec rules.Decision) {
	h, ok := d[dec.Workload]
	if !ok || h.Canary == nil || h.Canary.Pod != dec.UID || h.Canary.Instance != dec.Failure.ContainerID {
		return
	}
	h.Canary = nil
	d[dec.Workload] = h
}
