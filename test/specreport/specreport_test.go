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

package specreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

func spec(text string, nt types.NodeType, state types.SpecState, d time.Duration) types.SpecReport {
	r := types.SpecReport{LeafNodeText: text, LeafNodeType: nt, State: state, RunTime: d}
	if nt == types.NodeTypeIt { // suite nodes sit in no container
		r.ContainerHierarchyTexts = []string{"suite"}
	}
	return r
}

func TestFormatSlowestFirst(t *testing.T) {
	r := types.Report{SuiteDescription: "real-node e2e suite", RunTime: 200 * time.Second, SpecReports: types.SpecReports{
		spec("", types.NodeTypeBeforeSuite, types.SpecStatePassed, 40*time.Second),
		spec("fast", types.NodeTypeIt, types.SpecStatePassed, 2*time.Second),
		spec("slow", types.NodeTypeIt, types.SpecStateFailed, 120*time.Second),
		spec("skipped", types.NodeTypeIt, types.SpecStateSkipped, 0),
		spec("middle", types.NodeTypeIt, types.SpecStatePassed, 30*time.Second),
	}}
	got := Format(r)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	want := []string{
		"real-node e2e suite: wall 3m20s, 3 specs ran, 3m12s summed over specs and suite nodes (slowest first)",
		"   120.0s  failed  suite slow",
		"    40.0s  passed  BeforeSuite",
		"    30.0s  passed  suite middle",
		"     2.0s  passed  suite fast",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), got)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i, lines[i], want[i])
		}
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	r := types.Report{SuiteDescription: "s", SpecReports: types.SpecReports{spec("a", types.NodeTypeIt, types.SpecStatePassed, time.Second)}}
	if err := Write(dir, "e2e", r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "durations-e2e.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "1.0s  passed  suite a") {
		t.Fatalf("report:\n%s", b)
	}
}
