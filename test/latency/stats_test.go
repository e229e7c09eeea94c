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

package latency

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	twenty := ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 20 is the 10th", twenty, 50, 10 * time.Millisecond},
		{"p99 of 20 is the largest", twenty, 99, 20 * time.Millisecond},
		{"p95 of 20 is the 19th", twenty, 95, 19 * time.Millisecond},
		{"unsorted input", ms(30, 10, 20), 50, 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.samples, tt.p); got != tt.want {
				t.Fatalf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestAppLogTimes(t *testing.T) {
	log := "STARTED at=1000\n" +
		"FAILED-PROBE kind=http at=1500 ua=\"x\"\n" + // before the last switch: ignored
		"SWITCHED sick at=2000\n" +
		"SWITCHED healthy at=2500\n" +
		"SWITCHED sick at=3000\n" +
		"FAILED-PROBE kind=http at=3400 ua=\"kube-probe/1.37\"\n" +
		"FAILED-PROBE kind=http at=4400 ua=\"kube-probe/1.37\"\n" +
		"TERMINATED at=5000\n"
	sw, ff, ok := AppLogTimes(log)
	if !ok || sw.UnixNano() != 3000 || ff.UnixNano() != 3400 {
		t.Fatalf("AppLogTimes = %v %v %v, want 3000 3400 true", sw.UnixNano(), ff.UnixNano(), ok)
	}
	if _, _, ok := AppLogTimes("STARTED at=1\nSWITCHED sick at=2\n"); ok {
		t.Fatal("no failure after the switch must not be ok")
	}
	st, err := AppStarted(log)
	if err != nil || st.UnixNano() != 1000 {
		t.Fatalf("AppStarted = %v %v", st.UnixNano(), err)
	}
	if tt, err := AppTerminated(log); err != nil || tt.UnixNano() != 5000 {
		t.Fatalf("AppTerminated = %v %v", tt.UnixNano(), err)
	}
	if _, err := AppStarted("nothing\n"); err == nil {
		t.Fatal("want an error without STARTED")
	}
}
