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
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ProbeTypeLiveness is the probe_type label value, as the kubelet spells it.
const ProbeTypeLiveness = "Liveness"

// Result label values of the probe counter, as the kubelet's prober_probe_total uses them.
const (
	resultSuccessful = "successful"
	resultFailed     = "failed"
	resultUnknown    = "unknown"
)

var (
	probeLabels = []string{"probe_type", "container", "pod", "namespace", "pod_uid"}

	// probeTotalDesc and probeDurationDesc are the per-probe series; workers keep their values
	// and probeSeries exports them on scrape (probe_series.go).
	probeTotalDesc = prometheus.NewDesc("enhanced_liveness_daemon_probe_total",
		"Cumulative number of liveness probes run by the node daemon, by result (labels as the kubelet's prober_probe_total).",
		append(append([]string{}, probeLabels...), "result"), nil)
	probeDurationDesc = prometheus.NewDesc("enhanced_liveness_daemon_probe_duration_seconds",
		"Duration in seconds of one liveness probe run (labels as the kubelet's prober_probe_duration_seconds).",
		probeLabels, nil)
	probeDurationBuckets = prometheus.ExponentialBuckets(0.001, 2.5, 12)

	// ScheduleLag observes how late a probe started compared with its schedule.
	ScheduleLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "enhanced_liveness_daemon_probe_schedule_lag_seconds",
		Help:    "How late probe runs started relative to their period schedule.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12),
	})

	// Workers is the number of running probe workers by handler.
	Workers = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "enhanced_liveness_daemon_workers",
		Help: "Number of running liveness probe workers, by handler (http, tcp, grpc, exec).",
	}, []string{"handler"})

	// CRIErrors counts failed CRI calls by operation.
	CRIErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_daemon_cri_errors_total",
		Help: "CRI calls that failed with a runtime error (not a probe failure), by operation.",
	}, []string{"operation"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(probeSeries, ScheduleLag, Workers, CRIErrors)
}
