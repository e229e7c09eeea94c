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
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
)

// labelReason is the label of the hold metrics: the hold reason.
const labelReason = "reason"

// labelPodNamespace and labelMode label the figures of enrolling: the pods' namespace (not
// "namespace", which the scrape sets to the manager's) and the mode they were admitted in.
const (
	labelPodNamespace = "pod_namespace"
	labelMode         = "mode"
)

// labelResult is the label of the eviction metric, and its values.
const (
	labelResult   = "result"
	resultEvicted = "evicted"
	resultRefused = "refused"
)

// Prometheus metrics of the decision, on controller-runtime's registry (served on the
// manager's metrics endpoint). They count decisions as the policy status does: one per
// (pod, container, containerID, reason) transition, not one per requeue of a held restart.
var (
	restartsRequested = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "enhanced_liveness_restarts_requested_total",
		Help: "Restarts requested: ContainerRecreateRequests created by the decision controller.",
	})
	restartsHeld = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_restarts_held_total",
		Help: "Restarts held, by reason (counted once per pod, container, containerID and reason).",
	}, []string{labelReason})
	ineffectiveRestarts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "enhanced_liveness_ineffective_restarts_total",
		Help: "Restarts whose new container failed its liveness probe again soon after the restart.",
	})
	heldNotConfirmed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "enhanced_liveness_held_restarts_not_confirmed_total",
		Help: "Held restarts the budget allowed again but not requested: the API server showed the failure " +
			"cleared while the manager's cache did not yet.",
	})
	heldPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "enhanced_liveness_held_pods",
		Help: "Pods with a restart held now, by reason.",
	}, []string{labelReason})
	oldestHold = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "enhanced_liveness_oldest_hold_seconds",
		Help: "How long the oldest restart held now for the reason has been held (0: none is).",
	}, []string{labelReason})
	holdsOverMaxHold = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "enhanced_liveness_holds_over_max_hold",
		Help: "Restarts held for budget or doubt longer than their policy's maxHold (maxHold 0s and " +
			"Disabled, Shadow and Blacklisted holds excluded).",
	})
	evictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_evictions_total",
		Help: "Evictions of pods whose restarts do not help while their container passes on another node " +
			"(restartEffectiveness.action Evict), by result: evicted, or refused by the API server (a PodDisruptionBudget).",
	}, []string{labelResult})
	// The figures of enrolling (docs/policy.md, "What enrolling avoids and what it costs"): the
	// kubelet's restart moments against the engine's verdicts, counted once per container
	// instance's failure, by the pod's namespace and admitted mode.
	restartsAvoided = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_restarts_avoided_total",
		Help: "Restarts the kubelet made (Shadow) or would have made (Enforce) that the engine held, by the pods' " +
			"namespace, admitted mode and hold reason.",
	}, []string{labelPodNamespace, labelMode, labelReason})
	restartsAgreed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_restarts_agreed_total",
		Help: "Restarts the kubelet made (Shadow) or would have made (Enforce) that the engine made (or would have made) too, " +
			"by the pods' namespace and admitted mode.",
	}, []string{labelPodNamespace, labelMode})
	restartAdded = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "enhanced_liveness_restart_added_seconds",
		Help: "Of the agreed restarts: how long after the failure reached its threshold (the kubelet's moment) the engine " +
			"restarted, or would have, by the pods' namespace and admitted mode.",
		Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
	}, []string{labelPodNamespace, labelMode})
	decisionLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "enhanced_liveness_decision_latency_seconds",
		Help:    "Time from a liveness failure's lastTransitionTime to the creation of its ContainerRecreateRequest.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300},
	})
)

func init() {
	metrics.Registry.MustRegister(restartsRequested, restartsHeld, ineffectiveRestarts, heldNotConfirmed, decisionLatency,
		heldPods, oldestHold, holdsOverMaxHold, evictions,
		restartsAvoided, restartsAgreed, restartAdded)
}

// holdGauges sets the hold gauges from the decision's memory every interval, and sweeps the
// holds no decision sees any more (memory.Sweep); it runs on the leader only, where the memory is.
func holdGauges(mem *memory.Memory, interval time.Duration) manager.RunnableFunc {
	return func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			mem.Sweep()
			setHoldGauges(mem.HoldStats())
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	}
}

func setHoldGauges(s memory.HoldStats) {
	for _, r := range policyv1alpha1.HoldReasons {
		heldPods.WithLabelValues(string(r)).Set(float64(s.Pods[r]))
		oldestHold.WithLabelValues(string(r)).Set(s.Oldest[r].Seconds())
	}
	holdsOverMaxHold.Set(float64(s.OverMaxHold))
}
