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

package facts

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// onsets remember when the manager first saw each container instance failing or starting to fail
// (a probe state Failed, or with failingSince), on the manager's clock: the workload storm rules
// compare the onsets of pods on different nodes, whose clocks cannot be compared with each other
// (rules.Correlated). It is fed by the NodePodProbeReport watch, which sees every node's results
// as they change, so a sibling's onset is known whether or not a decision ever looked at it; a
// report a reader meets before its watch event (or after a manager start) is seen then.
//
// An entry is kept per pod and (probe, containerID): a restarted container is a new instance and
// a new onset. It is forgotten when its state passes, when the node's report no longer lists it,
// when its pod is deleted or the report is (with its NodePodProbe), so memory is bounded by the
// failing instances.
type onsets struct {
	clock  clock.PassiveClock
	mu     sync.Mutex
	byNode map[string]map[types.UID]map[onsetKey]time.Time
}

type onsetKey struct{ probe, containerID string }

func newOnsets(c clock.PassiveClock) *onsets {
	return &onsets{clock: c, byNode: map[string]map[types.UID]map[onsetKey]time.Time{}}
}

// failingKeys are the pod's probe states that are failing or starting to fail.
func failingKeys(ps *appsv1alpha1.PodProbeStatus, each func(onsetKey)) {
	for i := range ps.ProbeStates {
		if s := &ps.ProbeStates[i]; s.Failed() || s.Suspect() {
			each(onsetKey{probe: s.Name, containerID: s.ContainerID})
		}
	}
}

// observe replaces what is known of the node with its results (nil: they are gone): instances
// still failing keep their first sighting, new ones are seen now, the rest are dropped.
func (o *onsets) observe(node string, results *appsv1alpha1.ProbeResults) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if results == nil {
		delete(o.byNode, node)
		return
	}
	before, now := o.byNode[node], o.clock.Now()
	var after map[types.UID]map[onsetKey]time.Time
	for i := range results.PodProbeStatuses {
		ps := &results.PodProbeStatuses[i]
		failingKeys(ps, func(k onsetKey) {
			at, ok := before[ps.UID][k]
			if !ok {
				at = now
			}
			after = put(after, ps.UID, k, at)
		})
	}
	if after == nil {
		delete(o.byNode, node)
		return
	}
	o.byNode[node] = after
}

// put sets m[uid][k], making the maps it needs.
func put(m map[types.UID]map[onsetKey]time.Time, uid types.UID, k onsetKey, at time.Time) map[types.UID]map[onsetKey]time.Time {
	if m == nil {
		m = map[types.UID]map[onsetKey]time.Time{}
	}
	if m[uid] == nil {
		m[uid] = map[onsetKey]time.Time{}
	}
	m[uid][k] = at
	return m
}

// forgetPod drops a pod that is gone.
func (o *onsets) forgetPod(node string, uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.byNode[node], uid)
	if len(o.byNode[node]) == 0 {
		delete(o.byNode, node)
	}
}

// onset returns when the pod's current failures were first seen: the earliest first sighting of
// its failing or suspect states (zero when none is). A state not seen before is seen now.
func (o *onsets) onset(node string, ps *appsv1alpha1.PodProbeStatus) time.Time {
	if ps == nil {
		return time.Time{}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var out time.Time
	failingKeys(ps, func(k onsetKey) {
		at, ok := o.byNode[node][ps.UID][k]
		if !ok {
			at = o.clock.Now()
			o.byNode[node] = put(o.byNode[node], ps.UID, k, at)
		}
		if out.IsZero() || at.Before(out) {
			out = at
		}
	})
	return out
}

// ObserveProbes records a node's results the watch delivered (deleted: the report is gone): a
// NodePodProbeReport a daemon has written. One no daemon has written yet (the manager creates it
// empty) says nothing and leaves what is known alone. Call it from the watch, so that a failure's
// onset is when the manager saw it reported, not when a decision next looked.
func (b *Builder) ObserveProbes(rep *appsv1alpha1.NodePodProbeReport, deleted bool) {
	switch {
	case deleted:
		b.onsets.observe(rep.Name, nil)
	case rep.Written():
		b.onsets.observe(rep.Name, &rep.Status)
	}
}

// ForgetPod drops what is known of a deleted pod's failures, its decoded probes and its
// placement.
func (b *Builder) ForgetPod(pod *corev1.Pod) {
	b.decoded.forget(pod.UID)
	b.placements.forget(pod.UID)
	if pod.Spec.NodeName != "" {
		b.onsets.forgetPod(pod.Spec.NodeName, pod.UID)
	}
}

// of returns when the manager first saw one failing or suspect state of a pod (seen now if it was
// not seen before).
func (o *onsets) of(node string, uid types.UID, s *appsv1alpha1.ContainerProbeState) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := onsetKey{probe: s.Name, containerID: s.ContainerID}
	at, ok := o.byNode[node][uid][k]
	if !ok {
		at = o.clock.Now()
		o.byNode[node] = put(o.byNode[node], uid, k, at)
	}
	return at
}
