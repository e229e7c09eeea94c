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
package prober

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
)

// Manager owns the probe workers of the node. Sync tells it which probes exist and what the
// pods look like; it starts, updates and stops workers to match. It is a manager.Runnable:
// workers run between Start and the end of its context, and are all gone when Start returns.
type Manager struct {
	// Runtime runs exec probes, once it says the container is the pod's; nil means exec probes error.
	Runtime cri.ExecRuntime
	// Addresses gives the pod address that HTTP, TCP and gRPC probes naming no host dial; nil
	// makes them error.
	Addresses *cri.Addresses
	// HTTP is shared by all HTTP workers.
	HTTP *check.HTTP
	// UserAgent of HTTP and gRPC probes: kube-probe/<major>.<minor>.
	UserAgent string
	Results   *results.Cache
	Events    *Events
	Clock     clock.WithDelayedExecution
	// Jitter returns the delay of a worker's first run when the daemon started less than one
	// period ago; a uniform random fraction of the period when nil.
	Jitter func(period time.Duration) time.Duration
	// LagObserver, when set, also receives every run's schedule lag (benchmarks, diagnostics);
	// the enhanced_liveness_daemon_probe_schedule_lag_seconds histogram always does.
	LagObserver func(time.Duration)

	started time.Time

	mu      sync.RWMutex
	ctx     context.Context
	closed  bool
	workers map[results.Key]*worker
	pods    map[types.UID]*corev1.Pod
	// ipWarned is, by pod, the status.podIP last reported as not the pod's address.
	ipWarned map[types.UID]string
	pending  []Target
	wg       sync.WaitGroup
}

// NewManager returns a manager with the real clock and a fresh cache.
func NewManager(rt cri.ExecRuntime, userAgent string, events *Events) *Manager {
	return &Manager{Runtime: rt, HTTP: check.NewHTTP(), UserAgent: userAgent, Results: results.NewCache(), Events: events}
}

func (m *Manager) init() {
	if m.Clock == nil {
		m.Clock = clock.RealClock{}
	}
	if m.Results == nil {
		m.Results = results.NewCache()
	}
	if m.HTTP == nil {
		m.HTTP = check.NewHTTP()
	}
	if m.Jitter == nil {
		m.Jitter = func(p time.Duration) time.Duration { return time.Duration(rand.Float64() * float64(p)) }
	}
	if m.workers == nil {
		m.workers = map[results.Key]*worker{}
	}
}

// NeedLeaderElection is false: every node runs its own probes.
func (m *Manager) NeedLeaderElection() bool { return false }

// Start runs the workers until ctx ends, then stops them all and waits for them.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	m.init()
	m.started = m.Clock.Now()
	m.ctx = ctx
	pending := m.pending
	m.pending = nil
	m.mu.Unlock()
	probeSeries.add(m)
	defer probeSeries.remove(m)
	if pending != nil {
		m.Sync(pending, nil)
	}
	<-ctx.Done()
	m.mu.Lock()
	m.closed = true // a Sync racing with shutdown must not start workers the Wait below misses
	for k, w := range m.workers {
		m.stopLocked(k, w, false)
	}
	m.mu.Unlock()
	m.wg.Wait()
	return nil
}

// Sync makes the workers match targets. pods (nil keeps the last set) are the node's pods that
// workers read container state from. Probes of terminating or finished pods get no worker.
func (m *Manager) Sync(targets []Target, pods []*corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	if pods != nil {
		idx := make(map[types.UID]*corev1.Pod, len(pods))
		for _, p := range pods {
			idx[p.UID] = p
		}
		for uid, p := range m.pods {
			if _, ok := idx[uid]; !ok {
				m.Addresses.Forget(p)
				delete(m.ipWarned, uid)
			}
		}
		m.pods = idx
	}
	if m.closed {
		return
	}
	if m.ctx == nil {
		m.pending = append(m.pending[:0], targets...)
		return
	}
	want := make(map[results.Key]struct{}, len(targets))
	for i := range targets {
		t := targets[i]
		t.Probe = withDefaults(t.Probe)
		if p := m.pods[t.PodUID]; p != nil && done(p) {
			continue
		}
		want[t.Key] = struct{}{}
		if w, ok := m.workers[t.Key]; ok {
			if !equality.Semantic.DeepEqual(w.target.Load(), &t) {
				w.setTarget(&t)
			}
			continue
		}
		w := newWorker(m, &t)
		m.workers[t.Key] = w
		Workers.WithLabelValues(check.Label(&t.Probe.ProbeHandler)).Inc()
		w.start(m.ctx)
	}
	for k, w := range m.workers {
		if _, ok := want[k]; !ok {
			m.stopLocked(k, w, true)
		}
	}
}

// stopLocked stops w (its metric series go with it); forget also drops its result (the probe
// left the spec).
func (m *Manager) stopLocked(k results.Key, w *worker, forget bool) {
	w.stop()
	delete(m.workers, k)
	t := w.target.Load()
	Workers.WithLabelValues(check.Label(&t.Probe.ProbeHandler)).Dec()
	if forget {
		m.Results.Delete(k)
	}
}

// WorkerCount returns the number of workers.
func (m *Manager) WorkerCount() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.workers)
}

func (m *Manager) pod(uid types.UID) *corev1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.pods[uid]
}

// report records a state for w, written as soon as write says, unless w was replaced or stopped
// meanwhile (a stopped worker must not resurrect the result that Sync just removed). It returns
// true on a transition.
func (m *Manager) report(w *worker, state appsv1alpha1.ProbeState, msg string, at time.Time, write results.Write) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.workers[w.key] != w {
		return false
	}
	return m.Results.Set(w.key, state, w.containerID, msg, at, write)
}

func (m *Manager) touch(w *worker, at time.Time) { m.Results.Touch(w.key, at) }

// markFailing records when the worker's current run of failures began (zero: it ended), written
// as soon as write says.
func (m *Manager) markFailing(w *worker, since time.Time, write results.Write) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.workers[w.key] == w {
		m.Results.SetFailing(w.key, since, write)
	}
}

// checkStatusIP warns, once per pod and status address, when the pod's status.podIP is not the
// address the runtime gives: the probes dial the runtime's, and whoever wrote the status's should
// be looked into.
func (m *Manager) checkStatusIP(t *Target, pod *corev1.Pod, a cri.PodAddress) {
	ip := pod.Status.PodIP
	if ip == "" || ip == a.IP {
		return
	}
	m.mu.Lock()
	if m.ipWarned == nil {
		m.ipWarned = map[types.UID]string{}
	}
	seen := m.ipWarned[pod.UID] == ip
	m.ipWarned[pod.UID] = ip
	m.mu.Unlock()
	if !seen {
		source := "as the container runtime reports it"
		if a.HostNetwork {
			source = "the node's, as the pod's sandbox shares the node's network"
		}
		m.Events.warn(t, pod, ReasonPodIPMismatch, "The pod's status.podIP %s is not its address %s %s (sandbox %s): probes dial %s",
			ip, a.IP, source, a.SandboxID, a.IP)
	}
}

// handlersEqual reports whether two probes run the same check.
func handlersEqual(a, b *corev1.Probe) bool {
	return equality.Semantic.DeepEqual(a.ProbeHandler, b.ProbeHandler)
}
