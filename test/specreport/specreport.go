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

// Package specreport writes where a Ginkgo suite's time went: one line per spec and per suite
// node (BeforeSuite, AfterSuite, ...), slowest first, with the suite's wall time at the top.
// The real-node suites write it from a ReportAfterSuite and .ci/run prints the head of each file,
// so a slow CI run says which spec made it slow without reading the whole log.
package specreport

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// FileName is the report file of suite in a report directory: durations-<suite>.txt.
func FileName(suite string) string { return "durations-" + suite + ".txt" }

// Format renders r: a header with the suite's wall time, how many specs ran and the sum of their
// run times (below the wall time when specs ran in parallel), then one line per run node,
// slowest first: run time, state, and the node's full text or kind.
func Format(r types.Report) string {
	type line struct {
		d     time.Duration
		state string
		text  string
	}
	var lines []line
	var sum time.Duration
	ran := 0
	for _, s := range r.SpecReports {
		if s.State == types.SpecStateSkipped || s.State == types.SpecStatePending || s.RunTime == 0 {
			continue
		}
		text := s.FullText()
		if s.LeafNodeType != types.NodeTypeIt {
			text = strings.TrimSpace(s.LeafNodeType.String() + " " + text)
		} else {
			ran++
		}
		sum += s.RunTime
		lines = append(lines, line{s.RunTime, s.State.String(), text})
	}
	slices.SortStableFunc(lines, func(a, b line) int { return int(b.d - a.d) })
	var b strings.Builder
	fmt.Fprintf(&b, "%s: wall %s, %d specs ran, %s summed over specs and suite nodes (slowest first)\n",
		r.SuiteDescription, r.RunTime.Round(time.Second), ran, sum.Round(time.Second))
	for _, l := range lines {
		fmt.Fprintf(&b, "%8.1fs  %-7s %s\n", l.d.Seconds(), l.state, l.text)
	}
	return b.String()
}

// Write writes Format(r) to dir/FileName(suite).
func Write(dir, suite string, r types.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FileName(suite)), []byte(Format(r)), 0o644)
}
