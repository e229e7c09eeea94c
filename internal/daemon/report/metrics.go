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

package report

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// StatusWrites counts NodePodProbeReport status patches by outcome (success, conflict, error).
	StatusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_daemon_status_writes_total",
		Help: "NodePodProbeReport status patches sent by the daemon, by outcome (success, conflict, error).",
	}, []string{"result"})

	// FailureReportSeconds observes, for each liveness failure the daemon reports, the time from
	// the probe run that crossed the failure threshold until the apiserver acknowledged the status
	// write (of the node's NodePodProbeReport) that carries it: what the manager's decision waits
	// for on the node's side (FailureTimes).
	FailureReportSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "enhanced_liveness_daemon_failure_report_seconds",
		Help:    "Time from a liveness probe run crossing its failure threshold to the acknowledged NodePodProbeReport status write that reports it.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
	})

	// ReportBytes is the JSON size of the report status the daemon last wrote.
	ReportBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "enhanced_liveness_daemon_report_bytes",
		Help: "JSON size in bytes of the NodePodProbeReport status the daemon last wrote.",
	})
	// OmittedNamespaces is the number of namespaces whose results the last write cut to their
	// Failed states (fitBudget).
	OmittedNamespaces = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "enhanced_liveness_daemon_report_omitted_namespaces",
		Help: "Namespaces whose results the daemon cut to their Failed probes in the NodePodProbeReport it last wrote, to keep it within its byte budget.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(StatusWrites, FailureReportSeconds, ReportBytes, OmittedNamespaces)
}
