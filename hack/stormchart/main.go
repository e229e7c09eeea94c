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

// Command stormchart draws the restart counts that the real-node storm specs sampled (an enrolled
// workload beside its native twin, over time) and, when the report has them, the time a workload
// that really hung took to recover in each, as one SVG: make storm-chart.
//
//	stormchart -in bin/e2e-report -out docs/images/storm-restarts.svg
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/stormchart/series"
)

func main() {
	in := flag.String("in", "bin/e2e-report", "the e2e report directory (its storms/ holds the series, storms/recovery/ the recoveries)")
	out := flag.String("out", "", "the SVG file to write (required)")
	note := flag.String("footnote", "", "the line under the chart (default: where the data came from)")
	flag.Parse()
	if err := run(*in, *out, *note); err != nil {
		fmt.Fprintln(os.Stderr, "stormchart:", err)
		os.Exit(1)
	}
}

func run(in, out, note string) error {
	if out == "" {
		return fmt.Errorf("-out: required")
	}
	all, err := series.ReadDir(in)
	if err != nil {
		return err
	}
	recs, err := series.ReadRecoveryDir(in)
	if err != nil {
		return err
	}
	if note == "" {
		note = fmt.Sprintf("Sampled on two local nodes by the storm specs of make test-e2e (%s); drawn by hack/stormchart.", all[0].Start[:len("2006-01-02")])
	}
	svg, err := Render(all, recs, note)
	if err != nil {
		return err
	}
	return os.WriteFile(out, svg, 0o644)
}
