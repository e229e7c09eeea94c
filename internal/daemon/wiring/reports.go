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

package wiring

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// FailureReportSeconds observes, for each liveness failure the daemon reports, the time from the
// probe run that crossed the failure threshold until the apiserver acknowledged the status write
// (of the node's NodePodProbeReport) that carries it: what the manager's decision waits for on the node's side.
var FailureReportSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "enhanced_liveness_daemon_failure_report_seconds",
	Help:    "Time from a liveness probe run crossing its failure threshold to the acknowledged NodePodProbeReport status write that reports it.",
	Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
})

func init() { ctrlmetrics.Registry.MustRegister(FailureReportSeconds) }

// failureReports times the status writes that report liveness failures. It wraps the status
// writer's client rather than living in the writer, so the writer's own window, reads and
// conflict retries are all inside the measured time.
type failureReports struct {
	clock clock.PassiveClock
	// since: states that failed before the daemon started were reported by an earlier run (the
	// writer keeps what the object shows), so they are not new.
	since time.Time
	mu    sync.Mutex
	// written are the Failed states the status shows, by pod and probe: their transition time.
	written map[reportKey]time.Time
}

type reportKey struct {
	uid   types.UID
	probe string
}

// newReport is one Failed state a write is about to report for the first time.
type newReport struct {
	pod, probe, containerID string
	failedAt                time.Time
}

func newFailureReports(c clock.PassiveClock) *failureReports {
	return &failureReports{clock: c, since: c.Now(), written: map[reportKey]time.Time{}}
}

// pending returns the Failed states of the results about to be written not reported yet, and all
// their Failed states. It must run before the write: the apiserver's answer replaces the
// in-memory times with second-precision ones.
func (f *failureReports) pending(results *appsv1alpha1.ProbeResults) ([]newReport, map[reportKey]time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var fresh []newReport
	failed := map[reportKey]time.Time{}
	for i := range results.PodProbeStatuses {
		ps := &results.PodProbeStatuses[i]
		for _, s := range ps.ProbeStates {
			if !s.Failed() {
				continue
			}
			k, at := reportKey{ps.UID, s.Name}, s.LastTransitionTime.Time
			failed[k] = at
			if at.Before(f.since) || f.written[k].Equal(at) {
				continue
			}
			fresh = append(fresh, newReport{pod: ps.Namespace + "/" + ps.Name, probe: s.Name, containerID: s.ContainerID, failedAt: at})
		}
	}
	return fresh, failed
}

// acknowledged records the Failed states a successful write carried, logs the new ones and
// observes their latency.
func (f *failureReports) acknowledged(failed map[reportKey]time.Time, fresh []newReport, sent, acked time.Time) {
	f.mu.Lock()
	f.written = failed
	f.mu.Unlock()
	log := ctrl.Log.WithName("status-writer")
	for _, r := range fresh {
		FailureReportSeconds.Observe(acked.Sub(r.failedAt).Seconds())
		// One line per reported liveness failure, with times precise enough to follow a restart
		// from the node to the manager and back (docs/daemon.md).
		log.Info("liveness failure reported", "pod", r.pod, "probe", r.probe, "containerID", r.containerID,
			"failedAt", stamp(r.failedAt), "sentAt", stamp(sent), "acknowledgedAt", stamp(acked),
			"took", acked.Sub(r.failedAt).String())
	}
}

// stamp formats a time for logs: UTC, nanoseconds, whatever the log encoder does with times.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// reportingClient is the status writer's client: its patches of a NodePodProbeReport's status
// are timed.
type reportingClient struct {
	client.Client
	reports *failureReports
}

func (c reportingClient) Status() client.SubResourceWriter {
	return reportingStatus{SubResourceWriter: c.Client.Status(), reports: c.reports}
}

type reportingStatus struct {
	client.SubResourceWriter
	reports *failureReports
}

func (s reportingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	rep, ok := obj.(*appsv1alpha1.NodePodProbeReport)
	if !ok {
		return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	}
	fresh, failed := s.reports.pending(&rep.Status)
	sent := s.reports.clock.Now()
	err := s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	if err == nil {
		s.reports.acknowledged(failed, fresh, sent, s.reports.clock.Now())
	}
	return err
}
