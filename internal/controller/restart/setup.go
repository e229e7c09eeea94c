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
package restart

import (
	"cmp"
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/facts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/figures"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// Options are the decision's settings; zero values take the defaults.
type Options struct {
	// OperatorNamespace holds the daemons' Leases.
	OperatorNamespace string
	// HoldRecheckInterval is the fallback re-decision of a held restart when no watch event
	// arrives (RateLimited holds requeue for their next token instead).
	HoldRecheckInterval time.Duration
	// MaxConcurrentReconciles of the decision controller. Default 8: the facts are read from the
	// cache in parallel, deciding is serialised under the memory's lock and cheap; the workers
	// mostly wait for CRR creation.
	MaxConcurrentReconciles int
	// GaugeInterval is how often the hold gauges are set from the memory and the holds no
	// decision sees any more are swept (memory.Sweep).
	GaugeInterval time.Duration
	// EvictTimeout bounds an eviction call (default DefaultEvictTimeout).
	EvictTimeout time.Duration
	// Clock is injected by tests; default the real clock.
	Clock clock.Clock
	// OnDecision, when set, is called after every decision (benchmarks, diagnostics).
	OnDecision func(DecisionRecord)
	// LiveReader reads NodePodProbeReports from the API server to confirm a held restart (default
	// the manager's API reader).
	LiveReader client.Reader
	// EvictClient evicts pods (default the manager's client).
	EvictClient client.Client
}

// Holds keeps the memory's holds in their RestartHold records (internal/controller/restarthold).
type Holds interface {
	// Load reads the records into the memory once, before this leader's first decision.
	Load(ctx context.Context) error
	// WriteNow writes the key's record before the canary it releases is restarted or evicted.
	WriteNow(ctx context.Context, k rules.HoldKey) error
}

// EvictionRecords writes an eviction into status.recentEvictions of the policies that asked for
// it (internal/controller/policystatus, the one writer of the policy status): before the eviction,
// so that the pod webhook steers its replacement, and out again when it was not tried.
type EvictionRecords interface {
	// Record returns why the replacement is not steered ("": every write succeeded), and full
	// when a policy's list has no room: the eviction must not be made.
	Record(ctx context.Context, pod *corev1.Pod, d rules.Decision) (notSteered string, full bool)
	Forget(ctx context.Context, pod *corev1.Pod, d rules.Decision)
}

// Figures takes the figures of enrolling the decision counts, for the status of the policies that
// govern their pods (internal/controller/policystatus).
type Figures interface {
	AddFigure(policies []rules.PolicyKey, r figures.Record)
}

// SetupWithManager registers the decision controller. It decides by the facts builder and the
// memory the setup shares with the other controllers of the decision; holds, evictions and
// figures are written through their owners.
func SetupWithManager(mgr ctrl.Manager, b *facts.Builder, w *facts.Workloads, mem *memory.Memory,
	holds Holds, evictions EvictionRecords, figs Figures, o Options) error {
	o.complete()
	r := &Reconciler{
		Client:      mgr.GetClient(),
		live:        cmp.Or[client.Reader](o.LiveReader, mgr.GetAPIReader()),
		evictClient: cmp.Or[client.Client](o.EvictClient, mgr.GetClient()),
		opts:        o,
		clock:       o.Clock,
		recorder:    mgr.GetEventRecorder("enhanced-liveness-decision"),
		facts:       b,
		workloads:   w,
		memory:      mem,
		holds:       holds,
		evictions:   evictions,
		figures:     figures.NewLedger[figureTag](0),
		figureLog:   figs,
	}
	if err := r.setup(mgr); err != nil {
		return err
	}
	return mgr.Add(holdGauges(mem, o.GaugeInterval))
}

func (o *Options) complete() {
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 8
	}
	if o.EvictTimeout <= 0 {
		o.EvictTimeout = DefaultEvictTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}
