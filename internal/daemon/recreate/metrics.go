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

package recreate

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// crrExecuted counts the requests this daemon finished, by result (succeeded, failed).
	crrExecuted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_daemon_crr_executed_total",
		Help: "ContainerRecreateRequests the node daemon finished, by result (succeeded, failed).",
	}, []string{"result"})

	// stopDuration is the time from the start of a container's preStop hook (or of the stop, when
	// it has none) until CRI StopContainer returned.
	stopDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "enhanced_liveness_daemon_container_stop_duration_seconds",
		Help:    "Time to stop a container for a ContainerRecreateRequest, preStop hook included.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300},
	})

	// startToStop is the executor's own share of a restart: from the step that took up the
	// request (its watch event) to the CRI stop call, preStop hook included.
	startToStop = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "enhanced_liveness_daemon_crr_start_to_stop_seconds",
		Help:    "Time from the executor taking up a ContainerRecreateRequest to its CRI StopContainer call, preStop hook included.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
	})
)

func init() {
	metrics.Registry.MustRegister(crrExecuted, stopDuration, startToStop)
}
