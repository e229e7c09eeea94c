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

func TestMaxConcurrent(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	iv := func(from, to int) Interval { return Interval{at(from), at(to)} }
	for _, tc := range []struct {
		name string
		in   []Interval
		want int
	}{
		{"none", nil, 0},
		{"one", []Interval{iv(0, 300)}, 1},
		{"one after the other", []Interval{iv(0, 300), iv(400, 700), iv(800, 900)}, 1},
		{"touching ends do not overlap", []Interval{iv(0, 300), iv(300, 600)}, 1},
		{"all at once", []Interval{iv(0, 300), iv(10, 310), iv(20, 320), iv(30, 330)}, 4},
		{"two pairs", []Interval{iv(0, 300), iv(100, 400), iv(500, 800), iv(600, 900)}, 2},
		{"unsorted, nested", []Interval{iv(500, 600), iv(0, 1000), iv(100, 200), iv(550, 580)}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MaxConcurrent(tc.in); got != tc.want {
				t.Errorf("MaxConcurrent = %d, want %d", got, tc.want)
			}
		})
	}
}
