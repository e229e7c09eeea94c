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

// Package latency holds the restart latency measurements of the real-node suites and the
// benchmarks, as plain Go that is unit tested without a cluster: the timestamps the operator and
// the e2e application log (OperatorStamps, AppLogTimes), percentiles of samples, and how many
// containers were down at once (MaxConcurrent).
package latency

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Percentile is the nearest-rank percentile p (0 < p <= 100) of samples; 0 for no samples.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

// AppLogTimes reads the test application's log (test/e2e/app): the time it was switched sick
// last, and the first failed HTTP probe after that switch. ok is false when either is missing.
func AppLogTimes(log string) (switched, firstFailure time.Time, ok bool) {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "SWITCHED sick "):
			if t, err := logTime(line); err == nil {
				switched, firstFailure = t, time.Time{}
			}
		case strings.HasPrefix(line, "FAILED-PROBE kind=http ") && !switched.IsZero() && firstFailure.IsZero():
			if t, err := logTime(line); err == nil {
				firstFailure = t
			}
		}
	}
	return switched, firstFailure, !switched.IsZero() && !firstFailure.IsZero()
}

// AppStarted is the "STARTED at=" time of the test application's log.
func AppStarted(log string) (time.Time, error) { return firstLine(log, "STARTED ") }

// AppTerminated is the "TERMINATED at=" time (SIGTERM received) of the test application's log.
func AppTerminated(log string) (time.Time, error) { return firstLine(log, "TERMINATED ") }

func firstLine(log, prefix string) (time.Time, error) {
	for line := range strings.SplitSeq(log, "\n") {
		if strings.HasPrefix(line, prefix) {
			return logTime(line)
		}
	}
	return time.Time{}, fmt.Errorf("no %q line in the log", strings.TrimSpace(prefix))
}

func logTime(line string) (time.Time, error) {
	for f := range strings.FieldsSeq(line) {
		if v, found := strings.CutPrefix(f, "at="); found {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return time.Time{}, err
			}
			return time.Unix(0, n), nil
		}
	}
	return time.Time{}, fmt.Errorf("no at= field in %q", line)
}
