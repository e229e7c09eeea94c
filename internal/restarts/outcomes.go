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

package restarts

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

// keepOutcomes bounds how long a restart is remembered: the longest breaker window the API allows.
const keepOutcomes = 24 * time.Hour

// Outcomes remember the restarts requested in each workload and whether the new container failed
// its probe again soon after the restart, for the restart-effectiveness breaker.
type Outcomes struct {
	mu         sync.Mutex
	byWorkload map[protection.WorkloadKey][]outcome
}

type outcome struct {
	pod         types.UID
	container   string
	oldID       string        // the instance the restart stopped
	soon        time.Duration // a failure within this of the new container's start did not help
	at          time.Time     // when the restart was requested
	ineffective bool
}

// NewOutcomes returns an empty memory.
func NewOutcomes() *Outcomes {
	return &Outcomes{byWorkload: map[protection.WorkloadKey][]outcome{}}
}

// Requested remembers a restart of a container instance requested at at.
func (o *Outcomes) Requested(w protection.WorkloadKey, pod types.UID, container, oldID string, soon time.Duration, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	kept := o.byWorkload[w][:0]
	for _, r := range o.byWorkload[w] {
		if at.Sub(r.at) < keepOutcomes {
			kept = append(kept, r)
		}
	}
	o.byWorkload[w] = append(kept, outcome{pod: pod, container: container, oldID: oldID, soon: soon, at: at})
}

// Failed records that the instance newID of a restarted container, started at started, reached a
// Failed probe state at failedAt. When that is soon after the start, the restart that replaced
// the earlier instance did not help; it reports whether this marked one.
func (o *Outcomes) Failed(w protection.WorkloadKey, pod types.UID, container, newID string, started, failedAt time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	list := o.byWorkload[w]
	for i := len(list) - 1; i >= 0; i-- {
		r := &list[i]
		if r.pod != pod || r.container != container {
			continue
		}
		// The latest restart of this container; the new instance must be a later one (pod status
		// times have second precision).
		if r.ineffective || r.oldID == newID || started.Before(r.at.Truncate(time.Second)) || failedAt.Sub(started) > r.soon {
			return false
		}
		r.ineffective = true
		return true
	}
	return false
}

// Tally counts the workload's restarts requested within window before now, and those that did
// not help.
func (o *Outcomes) Tally(w protection.WorkloadKey, window time.Duration, now time.Time) protection.RestartTally {
	o.mu.Lock()
	defer o.mu.Unlock()
	var t protection.RestartTally
	for _, r := range o.byWorkload[w] {
		if now.Sub(r.at) > window {
			continue
		}
		t.Requested++
		if r.ineffective {
			t.Ineffective++
		}
	}
	return t
}

// ForgetPod drops the restarts of a pod that is gone: a replacement pod starts afresh.
func (o *Outcomes) ForgetPod(w protection.WorkloadKey, pod types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	kept := o.byWorkload[w][:0]
	for _, r := range o.byWorkload[w] {
		if r.pod != pod {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		delete(o.byWorkload, w)
		return
	}
	o.byWorkload[w] = kept
}
