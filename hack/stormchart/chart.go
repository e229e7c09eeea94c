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
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/stormchart/series"
)

// The layout of one panel (one storm spec), in SVG user units.
const (
	width       = 760
	panelHeight = 250
	headerH     = 44
	footerH     = 26
	plotLeft    = 60
	plotRight   = width - 150 // room for the end labels
	plotTop     = 34          // below the panel's title
	plotBottom  = panelHeight - 42
	labelGap    = 14 // the least vertical distance between the two end labels

	colorNative   = "#c0392b"
	colorEnrolled = "#1f6fb2"
)

// Render draws one panel per series: the restart counts of the native workload and of the
// enrolled one as step lines over the seconds since the sickness began, each ending in a label
// with its final count. Under them, when there are recoveries, one panel of the time each
// workload that really hung took to be Ready again (recoveryPanel). footnote goes under the panels.
func Render(all []series.Series, recs []series.Recovery, footnote string) ([]byte, error) {
	if len(all) == 0 {
		return nil, errors.New("no series to draw")
	}
	for i := range all {
		if err := all[i].Validate(); err != nil {
			return nil, err
		}
	}
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return nil, err
		}
	}
	height := headerH + len(all)*panelHeight + recoveryHeight(len(recs)) + footerH
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	title := "Container restarts over time: the kubelet alone (native) against enhanced liveness (enrolled)"
	if len(recs) > 0 {
		title = "The kubelet alone (native) against enhanced liveness (enrolled): restarts, recovery time"
	}
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="14" font-weight="bold">%s</text>`+"\n", 12, title)
	for i := range all {
		panel(&b, &all[i], headerH+i*panelHeight)
	}
	if len(recs) > 0 {
		recoveryPanel(&b, recs, headerH+len(all)*panelHeight)
	}
	fmt.Fprintf(&b, `<text x="12" y="%d" font-size="11" fill="#555555">%s</text>`+"\n", height-9, escape(footnote))
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}

// panel draws one series with its top at y0.
func panel(b *bytes.Buffer, s *series.Series, y0 int) {
	last := s.Samples[len(s.Samples)-1]
	top := 0
	for _, p := range s.Samples {
		top = max(top, int(p.Native), int(p.Enrolled))
	}
	xs := newScale(last.T, plotLeft, plotRight)
	ys := newScale(float64(top), float64(y0+plotBottom), float64(y0+plotTop))

	fmt.Fprintf(b, `<g id="%s">`+"\n", escape(s.Name))
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", plotLeft, y0+18, escape(s.Title))
	axes(b, xs, ys, y0)
	nativeY, enrolledY := ys.at(float64(last.Native)), ys.at(float64(last.Enrolled))
	stepLine(b, "native", colorNative, s.Samples, func(p series.Sample) int32 { return p.Native }, xs, ys)
	stepLine(b, "enrolled", colorEnrolled, s.Samples, func(p series.Sample) int32 { return p.Enrolled }, xs, ys)
	// The labels follow the lines' ends.
	nativeY, enrolledY = apart(nativeY, enrolledY)
	x := xs.at(last.T) + 8
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s">native: %d</text>`+"\n", x, nativeY+4, colorNative, last.Native)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s">enrolled: %d</text>`+"\n", x, enrolledY+4, colorEnrolled, last.Enrolled)
	b.WriteString("</g>\n")
}

// axes draws the frame, the ticks and their labels of one panel.
func axes(b *bytes.Buffer, xs, ys scale, y0 int) {
	fmt.Fprintf(b, `<path d="M%d %d V%d H%d" fill="none" stroke="#333333"/>`+"\n", plotLeft, y0+plotTop, y0+plotBottom, plotRight)
	for _, v := range ys.ticks() {
		y := ys.at(v)
		fmt.Fprintf(b, `<path d="M%d %.1f H%d" stroke="#e5e5e5"/>`+"\n", plotLeft+1, y, plotRight)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, y+4, number(v))
	}
	for _, v := range xs.ticks() {
		x := xs.at(v)
		fmt.Fprintf(b, `<path d="M%.1f %d v5" stroke="#333333"/>`+"\n", x, y0+plotBottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s s</text>`+"\n", x, y0+plotBottom+18, number(v))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="#555555">seconds since the containers began to fail</text>`+"\n",
		(plotLeft+plotRight)/2, y0+plotBottom+34)
	fmt.Fprintf(b, `<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle" fill="#555555">restarts</text>`+"\n",
		y0+(plotTop+plotBottom)/2, y0+(plotTop+plotBottom)/2)
}

// stepLine draws a count as a step line: it holds its value until the next sample.
func stepLine(b *bytes.Buffer, class, color string, samples []series.Sample, count func(series.Sample) int32, xs, ys scale) {
	var d strings.Builder
	for i, p := range samples {
		x, y := xs.at(p.T), ys.at(float64(count(p)))
		if i == 0 {
			fmt.Fprintf(&d, "M%.1f %.1f", x, y)
			continue
		}
		fmt.Fprintf(&d, " H%.1f V%.1f", x, y)
	}
	fmt.Fprintf(b, `<path class="%s" d="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", class, d.String(), color)
}

// apart moves two label positions apart so that their texts do not overlap; the upper stays upper.
func apart(a, c float64) (float64, float64) {
	if d := math.Abs(a - c); d < labelGap {
		shift := (labelGap - d) / 2
		if a <= c {
			return a - shift, c + shift
		}
		return a + shift, c - shift
	}
	return a, c
}

// scale maps [0, top] (top rounded up to a round number) onto [from, to].
type scale struct {
	top, step, from, to float64
}

func newScale(maxValue, from, to float64) scale {
	step := niceStep(maxValue / 4)
	top := math.Max(step, math.Ceil(maxValue/step)*step)
	return scale{top: top, step: step, from: from, to: to}
}

func (s scale) at(v float64) float64 { return s.from + (s.to-s.from)*v/s.top }

func (s scale) ticks() []float64 {
	var out []float64
	for v := 0.0; v <= s.top+s.step/2; v += s.step {
		out = append(out, v)
	}
	return out
}

// niceStep is the least of 1, 2, 2.5 or 5 times a power of ten that is at least raw (at least 1:
// counts and seconds need no fractions).
func niceStep(raw float64) float64 {
	if raw <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func number(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") }

func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
