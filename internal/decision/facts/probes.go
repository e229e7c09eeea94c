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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// podProbes keeps each pod's probes as decoded from its sealed probe context. Every decision
// reads the probes of all the failing pod's siblings, and the policy status those of every pod:
// decoding each context on every read was a third of the manager's CPU per decision at 10,000
// pods (docs/performance.md). An entry is valid while the pod's annotation is the same string
// (it is immutable once sealed; the comparison only guards the cache), and is dropped with its
// pod, so memory is bounded by the enrolled pods the manager caches.
type podProbes struct {
	mu   sync.Mutex
	byID map[types.UID]decodedProbes
}

type decodedProbes struct {
	raw    string
	probes []probecontext.Probe
}

func newPodProbes() *podProbes { return &podProbes{byID: map[types.UID]decodedProbes{}} }

// of returns the pod's probes (probecontext.PodProbes: nil when its context does not decode).
// The slice is shared: callers only read it. A nil podProbes decodes on every call.
func (c *podProbes) of(pod *corev1.Pod) []probecontext.Probe {
	if c == nil {
		probes, _, _ := probecontext.PodProbes(pod)
		return probes
	}
	raw := pod.Annotations[probecontext.AnnotationKey(pod.Annotations)]
	c.mu.Lock()
	e, ok := c.byID[pod.UID]
	c.mu.Unlock()
	if ok && e.raw == raw {
		return e.probes
	}
	probes, _, _ := probecontext.PodProbes(pod)
	c.mu.Lock()
	c.byID[pod.UID] = decodedProbes{raw: raw, probes: probes}
	c.mu.Unlock()
	return probes
}

// forget drops a deleted pod's probes.
func (c *podProbes) forget(uid types.UID) {
	c.mu.Lock()
	delete(c.byID, uid)
	c.mu.Unlock()
}

// len is the number of pods whose probes are kept.
func (c *podProbes) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byID)
}
