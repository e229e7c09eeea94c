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
	"encoding/xml"
	"strings"
	"testing"

	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/stormchart/series"
)

func TestNiceStep(t *testing.T) {
	for _, tc := range []struct{ raw, want float64 }{
		{0, 1}, {0.3, 1}, {1, 1}, {1.2, 2}, {3, 5}, {7, 10}, {12, 20}, {22, 25}, {60, 100}, {240, 250},
	} {
		if got := niceStep(tc.raw); got != tc.want {
			t.Errorf("niceStep(%v) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max       float64
		wantTop   float64
		wantTicks int
	}{
		{"zero still has a range", 0, 1, 2},
		{"one restart", 1, 1, 2},
		{"239 restarts", 239, 300, 4},
		{"150 seconds", 150, 150, 4},
		{"181 seconds", 181, 200, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScale(tc.max, 100, 0)
			if s.top != tc.wantTop || len(s.ticks()) != tc.wantTicks {
				t.Errorf("top %v with %d ticks, want %v with %d", s.top, len(s.ticks()), tc.wantTop, tc.wantTicks)
			}
			if s.at(0) != 100 || s.at(s.top) != 0 {
				t.Errorf("0 at %v and top at %v, want 100 and 0", s.at(0), s.at(s.top))
			}
		})
	}
}

func TestApart(t *testing.T) {
	for _, tc := range []struct{ a, c, wantA, wantC float64 }{
		{100, 10, 100, 10}, // far apart: unchanged
		{100, 100, 93, 107},
		{100, 96, 105, 91}, // the lower one stays lower
	} {
		a, c := apart(tc.a, tc.c)
		if a != tc.wantA || c != tc.wantC {
			t.Errorf("apart(%v, %v) = %v, %v, want %v, %v", tc.a, tc.c, a, c, tc.wantA, tc.wantC)
		}
	}
}

// svgDoc is the part of the chart the test reads back.
type svgDoc struct {
	Groups []struct {
		ID    string `xml:"id,attr"`
		Paths []struct {
			Class string `xml:"class,attr"`
			D     string `xml:"d,attr"`
		} `xml:"path"`
		Texts []string `xml:"text"`
	} `xml:"g"`
}

func TestRender(t *testing.T) {
	storm := series.Series{Name: "wrong-probe", Title: "A wrong probe on 10 replicas <rollout & hold>", Start: "2026-12-05T03:00:00Z",
		Samples: []series.Sample{{T: 0}, {T: 30, Native: 10, Enrolled: 1}, {T: 60, Native: 24, Enrolled: 1}}}
	quiet := series.Series{Name: "sticky", Title: "sticky", Start: "2026-12-05T03:10:00Z", Samples: []series.Sample{{T: 0}}}
	svg, err := Render([]series.Series{storm, quiet}, nil, "from a test")
	if err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("the chart is not well-formed XML: %v\n%s", err, svg)
	}
	if len(doc.Groups) != 2 || doc.Groups[0].ID != "wrong-probe" || doc.Groups[1].ID != "sticky" {
		t.Fatalf("want one panel per series in order, got %+v", doc.Groups)
	}
	lines := map[string]string{}
	for _, p := range doc.Groups[0].Paths {
		if p.Class != "" {
			lines[p.Class] = p.D
		}
	}
	// x: 60 s is the plot's right end; y: 24 restarts on a 0..25 scale of the first panel.
	if want := " H610.0 V"; !strings.Contains(lines["native"], want) || strings.Count(lines["native"], "H") != 2 {
		t.Errorf("native line %q: want two steps ending at x=610", lines["native"])
	}
	if strings.Count(lines["enrolled"], "H") != 2 {
		t.Errorf("enrolled line %q: want two steps", lines["enrolled"])
	}
	texts := strings.Join(doc.Groups[0].Texts, "|")
	for _, want := range []string{"native: 24", "enrolled: 1", "A wrong probe on 10 replicas <rollout & hold>"} {
		if !strings.Contains(texts, want) {
			t.Errorf("panel texts %q lack %q", texts, want)
		}
	}
}

func TestRenderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []series.Series
		want string
	}{
		{"nothing", nil, "no series"},
		{"no samples", []series.Series{{Name: "a", Start: "2026-12-05T03:00:00Z"}}, "samples: must have at least 1 item"},
		{"time goes back", []series.Series{{Name: "a", Start: "2026-12-05T03:00:00Z",
			Samples: []series.Sample{{T: 5}, {T: 4}}}}, "samples[1].t: must not be before samples[0].t"},
		{"a path for a name", []series.Series{{Name: "../a", Start: "2026-12-05T03:00:00Z",
			Samples: []series.Sample{{T: 0}}}}, "must be a non-empty file name"},
		{"no start", []series.Series{{Name: "a", Samples: []series.Sample{{T: 0}}}}, "must be an RFC 3339 time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(tc.in, nil, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
