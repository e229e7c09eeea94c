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

// Package apiclock measures how far the API server's clock is from this process's, from the Date
// header of the API server's own responses, so that the manager compares the API server's
// timestamps (creationTimestamp) only with times on the same clock: the admission signature's
// issue time and a request's deadline are judged as the API server's times, never as the
// manager's. The times one replica keeps in the API for another to read are written on the API
// server's clock and read back onto the reader's (Reading).
package apiclock

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

const (
	// MaxRoundTrip is the longest request a sample is taken from: the Date header says when the
	// API server answered within the round trip, so the round trip bounds the sample's error.
	MaxRoundTrip = 2 * time.Second
	// MaxAge is how long a measured offset is trusted. The manager talks to the API server every
	// few seconds (leader election, watches, writes): an older sample means it cannot reach it.
	MaxAge = 2 * time.Minute
	// dateResolution: the Date header has whole seconds.
	dateResolution = time.Second
)

// Offset is the API server's clock minus this process's.
var offsetSeconds = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "enhanced_liveness_apiserver_clock_offset_seconds",
	Help: "The API server's clock minus the manager's, measured from the Date header of the API server's responses (to within half a round trip and half a second).",
})

func init() { ctrlmetrics.Registry.MustRegister(offsetSeconds) }

// Clock is the API server's clock as this process measures it. The zero value is not usable:
// New.
type Clock struct {
	local clock.PassiveClock

	mu sync.Mutex
	// The sample kept: the offset, its error bound and when (local clock) it was taken.
	offset, bound time.Duration
	taken         time.Time
}

// New returns a Clock that measures against local (clock.RealClock when nil).
func New(local clock.PassiveClock) *Clock {
	if local == nil {
		local = clock.RealClock{}
	}
	return &Clock{local: local}
}

// Observe records one response of the API server: sent and received on the local clock, date
// its Date header. The sample replaces the one kept when it is at least as precise, or when the
// one kept is older than a minute (a clock may be stepped).
func (c *Clock) Observe(sent, received, date time.Time) {
	rtt := received.Sub(sent)
	if rtt < 0 || rtt > MaxRoundTrip || date.IsZero() {
		return
	}
	// The API server answered between sent and received, at a time within [date, date+1s).
	mid := sent.Add(rtt / 2)
	offset := date.Add(dateResolution / 2).Sub(mid.Round(0))
	bound := rtt/2 + dateResolution/2
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.taken.IsZero() && bound > c.bound && received.Sub(c.taken) < time.Minute {
		return
	}
	c.offset, c.bound, c.taken = offset, bound, received
	offsetSeconds.Set(offset.Seconds())
}

// Offset returns the API server's clock minus this process's, and whether it was measured within
// MaxAge.
func (c *Clock) Offset() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset, !c.taken.IsZero() && c.local.Since(c.taken) <= MaxAge
}

// Now returns the API server's time now, as last measured (the local time before any
// measurement: the manager's first requests, which its caches make before anything is decided,
// measure it).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	offset := c.offset
	c.mu.Unlock()
	return c.local.Now().Add(offset)
}

// Since returns the time since t, a time on the API server's clock.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

var _ clock.PassiveClock = (*Clock)(nil)

// Wrap returns a round tripper that measures every response of rt; for rest.Config's
// WrapTransport, so that every client of the manager measures.
func (c *Clock) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{c: c, next: rt}
}

type roundTripper struct {
	c    *Clock
	next http.RoundTripper
}

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := t.c.local.Now()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if date, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
		t.c.Observe(sent, t.c.local.Now(), date)
	}
	return resp, nil
}
