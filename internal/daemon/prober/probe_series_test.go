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
	"fmt"
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
)

func TestProbeStats_BucketsAreInclusiveUpperBounds(t *testing.T) {
	// Buckets are 1 ms × 2.5^i; a duration equal to a bound belongs to that bound's bucket.
	for _, tc := range []struct {
		seconds float64
		bucket  int // index into probeStats.buckets; 12 is +Inf
	}{
		{0, 0}, {0.001, 0}, {0.0011, 1}, {0.0025, 1}, {0.0026, 2}, {1.0, 8}, {23.84185791015625, 11}, {24, 12}, {1e9, 12},
	} {
		var s probeStats
		s.observe(runFailed, tc.seconds)
		for i := range s.buckets {
			if want := uint64(0); i == tc.bucket {
				want = 1
				if got := s.buckets[i].Load(); got != want {
					t.Errorf("%v s: bucket %d = %d, want 1", tc.seconds, i, got)
				}
			} else if got := s.buckets[i].Load(); got != want {
				t.Errorf("%v s: bucket %d = %d, want 0", tc.seconds, i, got)
			}
		}
		if s.runs[runFailed].Load() != 1 || s.runs[runSuccessful].Load() != 0 {
			t.Errorf("%v s: runs %v", tc.seconds, &s.runs)
		}
	}
}

func TestProbeStats_CollectSumsAndCumulativeCounts(t *testing.T) {
	var s probeStats
	for _, d := range []float64{0.0005, 0.002, 0.002, 30} {
		s.observe(runSuccessful, d)
	}
	s.observe(runUnknown, 0.5)
	ch := make(chan prometheus.Metric, 10)
	s.collect(ch, &Target{Key: results.Key{PodUID: "u", Container: "c"}, PodName: "p", Namespace: "n"})
	close(ch)
	var counters []string
	var hist *dto.Histogram
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		if d.Counter != nil {
			counters = append(counters, fmt.Sprintf("%s=%g", d.GetLabel()[len(d.GetLabel())-1].GetValue(), d.GetCounter().GetValue()))
		} else {
			hist = d.GetHistogram()
		}
	}
	// Labels sort by name: result is the last one.
	if got, want := len(counters), 2; got != want || counters[0] != "successful=4" || counters[1] != "unknown=1" {
		t.Errorf("counters %v, want [successful=4 unknown=1] (no failed series before a failed run)", counters)
	}
	if hist.GetSampleCount() != 5 || math.Abs(hist.GetSampleSum()-30.5045) > 1e-9 {
		t.Errorf("count %d sum %v, want 5 and 30.5045", hist.GetSampleCount(), hist.GetSampleSum())
	}
	b := hist.GetBucket()
	if b[0].GetCumulativeCount() != 1 || b[1].GetCumulativeCount() != 3 || b[len(b)-1].GetCumulativeCount() != 4 {
		t.Errorf("cumulative buckets %v, want 1 at 1 ms, 3 at 2.5 ms, 4 below +Inf", b)
	}
}

// probeSeriesOf gathers the daemon's registry and returns the per-probe series of one pod:
// probe_total by result, and the duration histogram's sample count, after checking its labels
// and that its cumulative buckets end at the count.
func probeSeriesOf(t *testing.T, uid string) map[string]float64 {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["pod_uid"] != uid {
				continue
			}
			if labels["probe_type"] != "Liveness" || labels["container"] != "app" || labels["pod"] != "web" || labels["namespace"] != "ns" {
				t.Errorf("%s labels %v", mf.GetName(), labels)
			}
			switch mf.GetName() {
			case "enhanced_liveness_daemon_probe_total":
				out["probe_total/"+labels["result"]] = m.GetCounter().GetValue()
			case "enhanced_liveness_daemon_probe_duration_seconds":
				h := m.GetHistogram()
				if b := h.GetBucket(); len(b) != 12 || b[len(b)-1].GetCumulativeCount() != h.GetSampleCount() {
					t.Errorf("duration buckets %v, count %d", b, h.GetSampleCount())
				}
				out["duration_count"] = float64(h.GetSampleCount())
			}
		}
	}
	return out
}
