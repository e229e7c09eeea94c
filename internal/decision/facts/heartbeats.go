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
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/clock"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// heartbeats remember, per node, the daemon Lease's last renewTime and when the manager saw it
// change, on the manager's clock. Whether a daemon is reporting is judged by that, as the node
// lifecycle controller judges a kubelet: a node whose clock runs minutes ahead or behind the
// manager's is neither trusted for ever nor never.
type heartbeats struct {
	clock  clock.PassiveClock
	mu     sync.Mutex
	byNode map[string]heartbeat
}

type heartbeat struct {
	renew time.Time // the Lease's renewTime, on the node's clock
	seen  time.Time // when the manager saw it, on its own clock
}

func newHeartbeats(c clock.PassiveClock) *heartbeats {
	return &heartbeats{clock: c, byNode: map[string]heartbeat{}}
}

// observe records the node's renewTime as the Lease watch delivers it.
func (h *heartbeats) observe(node string, renew time.Time) { h.seen(node, renew) }

// seen returns when the manager first saw the node's Lease with this renewTime. A renewTime not
// seen before (the first look after a manager start, or a read ahead of its watch event) is seen
// now.
func (h *heartbeats) seen(node string, renew time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	hb, ok := h.byNode[node]
	if !ok || !hb.renew.Equal(renew) {
		hb = heartbeat{renew: renew, seen: h.clock.Now()}
		h.byNode[node] = hb
	}
	return hb.seen
}

// forget drops a node whose Lease is gone.
func (h *heartbeats) forget(node string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byNode, node)
}

// ObserveLease records a daemon Lease the watch delivered (deleted: it is gone). Call it from the
// Lease watch, so that the time a renewal was seen is when it happened, not when a decision
// next looked.
func (b *Builder) ObserveLease(l *coordinationv1.Lease, deleted bool) {
	node, ok := strings.CutPrefix(l.Name, appsv1alpha1.DaemonLeasePrefix)
	if !ok {
		return
	}
	if deleted || l.Spec.RenewTime == nil {
		b.heartbeats.forget(node)
		return
	}
	b.heartbeats.observe(node, l.Spec.RenewTime.Time)
}
