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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// FailureTimes times the status writes that report liveness failures: for each Failed state a
// write reports for the first time, the time from the probe run that crossed the failure
// threshold until the apiserver acknowledged the write (FailureReportSeconds, and a log line).
// The writer's own window, reads and conflict retries are all inside the measured time.
type FailureTimes struct {
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

// failureWrite is what one write is about to report: the Failed states not reported yet (fresh),
// all its Failed states, and when it was sent.
type failureWrite struct {
	fresh  []newReport
	failed map[reportKey]time.Time
	sent   time.Time
}

// NewFailureTimes times the failures that begin from now on (the daemon's start).
func NewFailureTimes(c clock.PassiveClock) *FailureTimes {
	return &FailureTimes{clock: c, since: c.Now(), written: map[reportKey]time.Time{}}
}

// sending returns what the results about to be written report: the Failed states not reported
// yet, and all their Failed states. It must run before the write: the apiserver's answer
// replaces the in-memory times with second-precision ones. A nil FailureTimes times nothing.
func (f *FailureTimes) sending(results *appsv1alpha1.ProbeResults) failureWrite {
	if f == nil {
		return failureWrite{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w := failureWrite{failed: map[reportKey]time.Time{}}
	for i := range results.PodProbeStatuses {
		ps := &results.PodProbeStatuses[i]
		for _, s := range ps.ProbeStates {
			if !s.Failed() {
				continue
			}
			k, at := reportKey{ps.UID, s.Name}, s.LastTransitionTime.Time
			w.failed[k] = at
			if at.Before(f.since) || f.written[k].Equal(at) {
				continue
			}
			w.fresh = append(w.fresh, newReport{pod: ps.Namespace + "/" + ps.Name, probe: s.Name, containerID: s.ContainerID, failedAt: at})
		}
	}
	w.sent = f.clock.Now()
	return w
}

// acknowledged records the Failed states a successful write carried, logs the new ones and
// observes their latency.
func (f *FailureTimes) acknowledged(w failureWrite) {
	if f == nil {
		return
	}
	acked := f.clock.Now()
	f.mu.Lock()
	f.written = w.failed
	f.mu.Unlock()
	log := ctrl.Log.WithName("status-writer")
	for _, r := range w.fresh {
		FailureReportSeconds.Observe(acked.Sub(r.failedAt).Seconds())
		// One line per reported liveness failure, with times precise enough to follow a restart
		// from the node to the manager and back (docs/daemon.md).
		log.Info("liveness failure reported", "pod", r.pod, "probe", r.probe, "containerID", r.containerID,
			"failedAt", stamp.Nano(r.failedAt), "sentAt", stamp.Nano(w.sent), "acknowledgedAt", stamp.Nano(acked),
			"took", acked.Sub(r.failedAt).String())
	}
}
