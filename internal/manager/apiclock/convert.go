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

package apiclock

import (
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// The objects whose times are read back (the object label of the clamp counter).
const (
	ObjectRestartHold = "RestartHold"
	ObjectPolicy      = "EnhancedLivenessPolicy"
)

// maxBound is the largest error bound a sample can have (Observe takes none from a longer round
// trip): how far off the replica that wrote a time may have been at most.
const maxBound = MaxRoundTrip/2 + dateResolution/2

var futureClamped = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "enhanced_liveness_future_timestamps_clamped_total",
	Help: "Times of past events read back from the API (a RestartHold, an entry of a policy's status.recentEvictions) " +
		"that lay in the future of the API server's clock, and were taken as now: a replica whose clock ran ahead wrote them.",
}, []string{"object"})

func init() { ctrlmetrics.Registry.MustRegister(futureClamped) }

// Reading is the measure of the API server's clock at one moment (Clock.Read). The times the
// manager keeps in the API for another replica to read (RestartHolds, status.recentEvictions)
// are written on the API server's clock, the one clock every replica measures, and read back
// onto the reader's own clock: ToAPI and FromAPI are the only conversions.
type Reading struct {
	// Now is this process's time when the clock was read.
	Now time.Time
	// Offset is the API server's clock minus this process's; zero when not Known.
	Offset time.Duration
	// Bound is how far Offset may be off; zero when not Known.
	Bound time.Duration
	// Known: Offset was measured within MaxAge. Otherwise times are converted as if the local
	// clock were the API server's, and still clamped.
	Known bool
}

// Read returns the measure now; the local clock's when the offset is not known (not measured yet,
// or not within MaxAge).
func (c *Clock) Read() Reading {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.local.Now()
	if c.taken.IsZero() || c.local.Since(c.taken) > MaxAge {
		return Reading{Now: now}
	}
	return Reading{Now: now, Offset: c.offset, Bound: c.bound, Known: true}
}

// ToAPI returns t, a time on this process's clock, on the API server's; the zero time stays zero.
func (r Reading) ToAPI(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Add(r.Offset)
}

// FromAPI returns t, the time of a past event written on the API server's clock (by this replica
// or another), on this process's clock; the zero time stays zero. A time later than the API
// server's now by more than the two measures' error bounds (this replica's, and the most the
// writer's can be) is no past event: a replica whose clock ran ahead wrote it. It is taken as now,
// and ahead says by how much it was ahead (zero: not clamped); Clamped makes it visible.
func (r Reading) FromAPI(t time.Time) (local time.Time, ahead time.Duration) {
	if t.IsZero() {
		return t, 0
	}
	local = t.Add(-r.Offset)
	if d := local.Sub(r.Now); d > r.Bound+maxBound {
		return r.Now, d
	}
	return local, 0
}

// SpanFromAPI is FromAPI for a past event, start, and a time set from it, end (a deadline, an
// expiry): end keeps its distance from start, so a clamped start moves what it set with it.
func (r Reading) SpanFromAPI(start, end time.Time) (localStart, localEnd time.Time, ahead time.Duration) {
	localStart, ahead = r.FromAPI(start)
	switch {
	case end.IsZero():
		return localStart, end, ahead
	case start.IsZero():
		return localStart, end.Add(-r.Offset), ahead
	}
	return localStart, localStart.Add(end.Sub(start)), ahead
}

// Clamped makes a clamp visible: a log line and enhanced_liveness_future_timestamps_clamped_total
// for object (ObjectRestartHold, ObjectPolicy) named name (namespace/name).
func Clamped(log logr.Logger, object, name string, ahead time.Duration) {
	futureClamped.WithLabelValues(object).Inc()
	log.Info("a time read back from the API lay in the future of the API server's clock (a replica whose clock ran ahead wrote it); taken as now",
		"object", object, "name", name, "ahead", ahead.String())
}

// LocalEvictions returns the entries of a policy's status.recentEvictions, written on the API
// server's clock, on this process's clock: time by FromAPI, expires kept as far from it. Each
// entry clamped is made visible (Clamped, the policy named policy). list is not changed.
func (r Reading) LocalEvictions(log logr.Logger, policy string, list []policyv1alpha1.RecentEviction) []policyv1alpha1.RecentEviction {
	if len(list) == 0 {
		return nil
	}
	out := make([]policyv1alpha1.RecentEviction, len(list))
	for i, e := range list {
		start, end, ahead := r.SpanFromAPI(e.Time.Time, e.Expires.Time)
		if ahead > 0 {
			Clamped(log, ObjectPolicy, policy, ahead)
		}
		e.Time.Time, e.Expires.Time = start, end
		out[i] = e
	}
	return out
}

// APIEvictions returns entries on this process's clock on the API server's: LocalEvictions undone
// for the entries it did not clamp. list is not changed.
func (r Reading) APIEvictions(list []policyv1alpha1.RecentEviction) []policyv1alpha1.RecentEviction {
	if len(list) == 0 {
		return nil
	}
	out := make([]policyv1alpha1.RecentEviction, len(list))
	for i, e := range list {
		e.Time.Time, e.Expires.Time = r.ToAPI(e.Time.Time), r.ToAPI(e.Expires.Time)
		out[i] = e
	}
	return out
}
