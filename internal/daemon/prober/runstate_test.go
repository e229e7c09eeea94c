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
	"strings"
	"testing"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
)

// TestRunState drives the run state through a script of runs and transitions from a new
// worker's state. Runs: S success, F failure, W warning, E errored; transitions: new-container,
// new-handler, not-running. Step i happens at second i. Each run's effects read
// "<counted> [errored|warning] [mark@<second the run of failures began>|clear] [Succeeded|Failed]".
func TestRunState(t *testing.T) {
	for _, tc := range []struct {
		name             string
		failureThreshold int32
		script           string
		want             []string // one per step; "" for a transition
	}{
		{"#8 a run of failures is reported when it reaches the threshold", 3, "F F S F F F F",
			[]string{"failed", "failed mark@0", "successful clear Succeeded", "failed", "failed mark@3", "failed Failed", "failed"}},
		{"#8 threshold 1: the first failure is Failed, and marked", 1, "S F",
			[]string{"successful clear Succeeded", "failed mark@1 Failed"}},
		{"#9 held after Failed: only a recovery is reported; then a failure counts afresh", 1, "F F F S F",
			[]string{"failed mark@0 Failed", "failed", "failed", "successful clear Succeeded", "failed mark@4 Failed"}},
		{"#9 held below a threshold of 3: a recovery needs one success, a new failure three", 3, "F F F F S F F F",
			[]string{"failed", "failed mark@0", "failed Failed", "failed", "successful clear Succeeded", "failed", "failed mark@5", "failed Failed"}},
		{"#10 a new container counts from zero and is not held", 2, "F F new-container F F",
			[]string{"failed", "failed mark@0 Failed", "", "failed", "failed mark@3 Failed"}},
		{"#11 not running: the next success is news again, a held failure stays held", 1, "S not-running S F not-running F S",
			[]string{"successful clear Succeeded", "", "successful Succeeded", "failed mark@3 Failed", "", "failed", "successful clear Succeeded"}},
		{"#14 errors are dropped, counters unchanged, one event when they start", 3, "F F E E F E",
			[]string{"failed", "failed mark@0", "unknown errored", "unknown", "failed Failed", "unknown errored"}},
		{"#20 warnings pass, one event when they start", 3, "W W S W F W",
			[]string{"successful warning clear Succeeded", "successful", "successful", "successful warning", "failed", "successful warning"}},
		{"errors and warnings have an event each when they start", 3, "E W E W",
			[]string{"unknown errored", "successful warning clear Succeeded", "unknown errored", "successful"}},
		{"a new handler restarts counting, not the report", 3, "S F F new-handler F F F",
			[]string{"successful clear Succeeded", "failed", "failed mark@1", "", "failed", "failed mark@4", "failed Failed"}},
		{"single failed runs between successes are no evidence", 3, "S F S F S",
			[]string{"successful clear Succeeded", "failed", "successful", "failed", "successful"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Unix(1000, 0)
			s := newRunState()
			steps := strings.Fields(tc.script)
			if len(steps) != len(tc.want) {
				t.Fatalf("script of %d steps, %d expectations", len(steps), len(tc.want))
			}
			for i, step := range steps {
				got := ""
				switch step {
				case "new-container":
					s = s.newContainer()
				case "new-handler":
					s = s.newHandler()
				case "not-running":
					s = s.notRunning()
				default:
					res := map[string]check.Result{"S": check.Success, "F": check.Failure, "W": check.Warning, "E": check.Unknown}[step]
					var e effects
					s, e = s.next(res, t0.Add(time.Duration(i)*time.Second), tc.failureThreshold, 1)
					got = describe(e, s, t0)
				}
				if got != tc.want[i] {
					t.Errorf("step %d (%s): %q, want %q", i, step, got, tc.want[i])
				}
			}
		})
	}
}

func describe(e effects, s runState, t0 time.Time) string {
	out := []string{runResults[e.counted]}
	switch e.event {
	case eventErrored:
		out = append(out, "errored")
	case eventWarning:
		out = append(out, "warning")
	}
	switch e.mark {
	case markSet:
		out = append(out, fmt.Sprintf("mark@%d", int(s.failingSince.Sub(t0).Seconds())))
	case markClear:
		out = append(out, "clear")
	}
	if e.report != "" {
		out = append(out, string(e.report))
	}
	return strings.Join(out, " ")
}
