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

package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/stormchart/series"
)

// recoveryDoc is the part of the chart with the recovery panel that the tests read back.
type recoveryDoc struct {
	Height string `xml:"height,attr"`
	Groups []struct {
		ID      string `xml:"id,attr"`
		Records []struct {
			ID    string `xml:"id,attr"`
			Rects []struct {
				Class string  `xml:"class,attr"`
				Width float64 `xml:"width,attr"`
				Fill  string  `xml:"fill,attr"`
			} `xml:"rect"`
			Texts []string `xml:"text"`
		} `xml:"g"`
		Texts []string `xml:"text"`
	} `xml:"g"`
}

func parseRecovery(t *testing.T, svg []byte) recoveryDoc {
	t.Helper()
	var doc recoveryDoc
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("the chart is not well-formed XML: %v\n%s", err, svg)
	}
	return doc
}

var storm = series.Series{Name: "1-wrong-probe", Title: "wrong probe", Start: "2026-12-05T03:00:00Z",
	Samples: []series.Sample{{T: 0}, {T: 60, Native: 209, Enrolled: 2}}}

func TestRenderRecovery(t *testing.T) {
	recs := []series.Recovery{
		{Name: "3-hang-all", Title: "All 10 replicas hang <default policy>", Start: "2026-12-05T03:20:00Z",
			NativeSeconds: 6.2, EnrolledSeconds: 43.8,
			Figures: &series.Figures{Avoided: 9, Agreed: 10, AddedP50Seconds: 31, AddedMaxSeconds: 38}},
		{Name: "4-hang-kill", Title: "manager killed every 40 s", Start: "2026-12-05T03:25:00Z",
			NativeSeconds: 5.9, EnrolledSeconds: 65.3},
	}
	svg, err := Render([]series.Series{storm}, recs, "from a test")
	if err != nil {
		t.Fatal(err)
	}
	doc := parseRecovery(t, svg)
	if len(doc.Groups) != 2 || doc.Groups[0].ID != storm.Name || doc.Groups[1].ID != "recovery" {
		t.Fatalf("want the restart panel, then the recovery panel; got %+v", doc.Groups)
	}
	panel := doc.Groups[1]
	if !strings.Contains(strings.Join(panel.Texts, "|"), "Time until every pod is Ready again after a hang a restart cures") {
		t.Errorf("recovery panel texts %q lack its title", panel.Texts)
	}
	if len(panel.Records) != 2 || panel.Records[0].ID != "recovery-3-hang-all" || panel.Records[1].ID != "recovery-4-hang-kill" {
		t.Fatalf("want one record group per recovery in order, got %+v", panel.Records)
	}
	for i, tc := range []struct {
		texts       []string
		absent      string
		native, enr float64 // the bars' widths: 0..80 s onto 550 units
	}{
		{[]string{"All 10 replicas hang <default policy>", "native: 6 s", "enrolled: 44 s", "added by enrolling: +38 s (enrolled − native)",
			"the policy's figures: avoided 9, agreed 10, added p50 31 s, max 38 s"}, "", 6 * 550 / 80.0, 44 * 550 / 80.0},
		{[]string{"manager killed every 40 s", "native: 6 s", "enrolled: 65 s", "added by enrolling: +59 s (enrolled − native)"},
			"the policy's figures", 6 * 550 / 80.0, 65 * 550 / 80.0},
	} {
		r := panel.Records[i]
		texts := strings.Join(r.Texts, "|")
		for _, want := range tc.texts {
			if !strings.Contains(texts, want) {
				t.Errorf("%s: texts %q lack %q", r.ID, texts, want)
			}
		}
		if tc.absent != "" && strings.Contains(texts, tc.absent) {
			t.Errorf("%s: texts %q: want no %q without figures", r.ID, texts, tc.absent)
		}
		if len(r.Rects) != 2 {
			t.Fatalf("%s: want two bars, got %+v", r.ID, r.Rects)
		}
		for j, want := range []struct {
			class, fill string
			width       float64
		}{{"native", colorNative, tc.native}, {"enrolled", colorEnrolled, tc.enr}} {
			got := r.Rects[j]
			if got.Class != want.class || got.Fill != want.fill || got.Width < want.width-0.1 || got.Width > want.width+0.1 {
				t.Errorf("%s: bar %d = %+v, want %s in %s, %.1f wide", r.ID, j, got, want.class, want.fill, want.width)
			}
		}
	}
	if want := "restarts, recovery time"; !strings.Contains(string(svg), want) {
		t.Errorf("the chart's title lacks %q", want)
	}
}

func TestRenderRecoveryFasterEnrolled(t *testing.T) {
	svg, err := Render([]series.Series{storm}, []series.Recovery{{Name: "r", Title: "r", Start: "2026-12-05T03:20:00Z",
		NativeSeconds: 9, EnrolledSeconds: 7}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "added by enrolling: −2 s"; !bytes.Contains(svg, []byte(want)) {
		t.Errorf("chart lacks %q:\n%s", want, svg)
	}
}

func TestRenderWithoutRecovery(t *testing.T) {
	without, err := Render([]series.Series{storm}, nil, "from a test")
	if err != nil {
		t.Fatal(err)
	}
	doc := parseRecovery(t, without)
	if len(doc.Groups) != 1 || doc.Groups[0].ID != storm.Name {
		t.Errorf("want the restart panel only, got %+v", doc.Groups)
	}
	if want := "320"; doc.Height != want { // header, one panel, footer: the chart as before recoveries
		t.Errorf("height %s, want %s", doc.Height, want)
	}
	for _, absent := range []string{"Ready again", "added by enrolling", "recovery"} {
		if bytes.Contains(without, []byte(absent)) {
			t.Errorf("a chart without recoveries has %q", absent)
		}
	}
}

func TestRenderRefusesRecovery(t *testing.T) {
	_, err := Render([]series.Series{storm}, []series.Recovery{{Name: "r", Title: "r", Start: "2026-12-05T03:20:00Z",
		NativeSeconds: -1, EnrolledSeconds: 7}}, "")
	if want := `recovery "r": nativeSeconds -1: must be a finite number of seconds, not negative`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error with %q", err, want)
	}
}

// TestRunReadsBothKinds: the command draws the recoveries of the report's storms/recovery/, and a
// bad one stops it with an error naming the file and the field.
func TestRunReadsBothKinds(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "chart.svg")
	if err := series.Write(in, &storm); err != nil {
		t.Fatal(err)
	}
	good := series.Recovery{Name: "3-hang-all", Title: "All 10 replicas hang", Start: "2026-12-05T03:20:00Z", NativeSeconds: 6, EnrolledSeconds: 44}
	if err := series.WriteRecovery(in, &good); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, ""); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "added by enrolling: +38 s"; !bytes.Contains(svg, []byte(want)) {
		t.Errorf("chart of a report with a recovery lacks %q", want)
	}

	bad := filepath.Join(in, series.Dir, series.RecoveryDir, "4-bad.json")
	if err := os.WriteFile(bad, []byte(`{"name":"4-bad","title":"bad","start":"2026-12-05T03:25:00Z","nativeSeconds":6,"enrolledSeconds":-65}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(in, out, "")
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "enrolledSeconds -65: must be a finite number of seconds, not negative") {
		t.Errorf("run with a bad recovery = %v, want an error naming %s and enrolledSeconds", err, bad)
	}
}
