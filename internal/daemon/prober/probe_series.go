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
	"math"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// probeStats are one worker's probe_total and probe_duration_seconds values. A labelled
// client_golang series costs several KiB (label pairs, a histogram with hot/cold halves, the
// vector's map entry); at thousands of probes per node that was a quarter of the daemon's live
// heap. These cost ~130 bytes and are turned into series only when scraped. Only the worker
// goroutine writes; the scrape reads.
type probeStats struct {
	runs    [3]atomic.Uint64 // by result: successful, failed, unknown
	buckets [13]atomic.Uint64
	sumBits atomic.Uint64 // float64 bits of the sum of durations
}

const (
	runSuccessful = iota
	runFailed
	runUnknown
)

var runResults = [...]string{runSuccessful: resultSuccessful, runFailed: resultFailed, runUnknown: resultUnknown}

func init() {
	if len(probeDurationBuckets)+1 != len(probeStats{}.buckets) {
		panic("probeStats.buckets must hold every duration bucket and +Inf")
	}
}

func (s *probeStats) observe(result int, seconds float64) {
	s.runs[result].Add(1)
	i := 0
	for i < len(probeDurationBuckets) && seconds > probeDurationBuckets[i] {
		i++
	}
	s.buckets[i].Add(1)
	s.sumBits.Store(math.Float64bits(math.Float64frombits(s.sumBits.Load()) + seconds))
}

// collect sends the worker's series. As with the kubelet's prober_probe_total, the failed and
// unknown series appear with the first such run.
func (s *probeStats) collect(ch chan<- prometheus.Metric, t *Target) {
	labels := [...]string{ProbeTypeLiveness, t.Container, t.PodName, t.Namespace, string(t.PodUID), ""}
	for r, name := range runResults {
		n := s.runs[r].Load()
		if n == 0 && r != runSuccessful {
			continue
		}
		labels[len(labels)-1] = name
		ch <- prometheus.MustNewConstMetric(probeTotalDesc, prometheus.CounterValue, float64(n), labels[:]...)
	}
	// The count is the buckets' total, so that a scrape racing a run stays consistent.
	cumulative := make(map[float64]uint64, len(probeDurationBuckets))
	var count uint64
	for i := range s.buckets {
		count += s.buckets[i].Load()
		if i < len(probeDurationBuckets) {
			cumulative[probeDurationBuckets[i]] = count
		}
	}
	ch <- prometheus.MustNewConstHistogram(probeDurationDesc, count, math.Float64frombits(s.sumBits.Load()), cumulative,
		labels[:len(labels)-1]...)
}

// seriesCollector exports the per-probe series of the workers of every started manager. A
// worker's series leave with it: nothing to delete when a probe leaves the spec.
type seriesCollector struct {
	mu       sync.Mutex
	managers map[*Manager]struct{}
}

var probeSeries = &seriesCollector{managers: map[*Manager]struct{}{}}

func (c *seriesCollector) add(m *Manager) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.managers[m] = struct{}{}
}

func (c *seriesCollector) remove(m *Manager) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.managers, m)
}

func (c *seriesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- probeTotalDesc
	ch <- probeDurationDesc
}

func (c *seriesCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	managers := make([]*Manager, 0, len(c.managers))
	for m := range c.managers {
		managers = append(managers, m)
	}
	c.mu.Unlock()
	for _, m := range managers {
		m.mu.RLock()
		workers := make([]*worker, 0, len(m.workers))
		for _, w := range m.workers {
			workers = append(workers, w)
		}
		m.mu.RUnlock()
		for _, w := range workers {
			w.stats.collect(ch, w.target.Load())
		}
	}
}
