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

// Package notice says when a lasting state of a pod is told in an event: once it has lasted a
// grace period (a pod the probe mapping has just added is not told about), again when its reason
// changes, and every interval while it lasts.
package notice

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Tracker remembers, per pod, since when a state is seen and when it was last told. It is not
// safe for concurrent use: one loop observes.
type Tracker struct {
	grace, every time.Duration
	pods         map[types.UID]entry
}

type entry struct {
	reason      string
	since, told time.Time
}

// New returns a tracker that tells a state once it has lasted grace, then every every.
func New(grace, every time.Duration) *Tracker {
	return &Tracker{grace: grace, every: every, pods: map[types.UID]entry{}}
}

// Due is a state to tell now: the pod, its reason and how long it has lasted.
type Due struct {
	UID    types.UID
	Reason string
	For    time.Duration
}

// Observe records the pods seen in the state now, by UID with their reason, forgets the others,
// and returns the states due an event now.
func (t *Tracker) Observe(now time.Time, seen map[types.UID]string) []Due {
	var out []Due
	for uid, reason := range seen {
		e, ok := t.pods[uid]
		if !ok || e.reason != reason {
			e = entry{reason: reason, since: now}
		}
		lasted := now.Sub(e.since)
		if lasted >= t.grace && (e.told.IsZero() || now.Sub(e.told) >= t.every) {
			e.told = now
			out = append(out, Due{UID: uid, Reason: reason, For: lasted})
		}
		t.pods[uid] = e
	}
	for uid := range t.pods {
		if _, ok := seen[uid]; !ok {
			delete(t.pods, uid)
		}
	}
	return out
}
