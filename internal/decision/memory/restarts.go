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

// keepRestarts bounds how long a restart is remembered: the longest breaker window the API allows.
const keepRestarts = 24 * time.Hour

// restarts remember the restarts requested in each workload and whether each helped, for the
// restart-effectiveness breaker (the rules judge them: rules.Ineffective).
type restarts struct {
	byWorkload map[rules.WorkloadKey][]rules.RestartRecord
	// workloadOf is the workload of each pod's restarts, to forget them when the pod goes.
	workloadOf map[types.UID]rules.WorkloadKey
}

func newRestarts() *restarts {
	return &restarts{byWorkload: map[rules.WorkloadKey][]rules.RestartRecord{}, workloadOf: map[types.UID]rules.WorkloadKey{}}
}

// of returns the workload's restarts, oldest first; the caller only reads them.
func (o *restarts) of(w rules.WorkloadKey) []rules.RestartRecord { return o.byWorkload[w] }

// requested remembers a restart of a container instance, whose probe turned Failed at failed (the
// node's clock), requested at at (the manager's), and forgets the workload's restarts older than
// keepRestarts.
func (o *restarts) requested(w rules.WorkloadKey, pod types.UID, container, oldID string, failed time.Time, soon time.Duration, at time.Time) {
	kept := o.byWorkload[w][:0]
	for _, r := range o.byWorkload[w] {
		if at.Sub(r.At) < keepRestarts {
			kept = append(kept, r)
		}
	}
	o.byWorkload[w] = append(kept, rules.RestartRecord{
		RestartID: rules.RestartID{Pod: pod, Container: container, Instance: oldID, At: at}, Soon: soon, InstanceFailed: failed})
	o.workloadOf[pod] = w
}

// ineffective marks a restart found not to have helped.
func (o *restarts) ineffective(w rules.WorkloadKey, id rules.RestartID) {
	for i := range o.byWorkload[w] {
		if r := &o.byWorkload[w][i]; r.RestartID == id {
			r.Ineffective = true
		}
	}
}

// forgetPod drops the restarts of a pod that is gone: a replacement pod starts afresh.
func (o *restarts) forgetPod(pod types.UID) {
	w, ok := o.workloadOf[pod]
	if !ok {
		return
	}
	delete(o.workloadOf, pod)
	kept := o.byWorkload[w][:0]
	for _, r := range o.byWorkload[w] {
		if r.Pod != pod {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		delete(o.byWorkload, w)
		return
	}
	o.byWorkload[w] = kept
}
