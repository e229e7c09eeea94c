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
	"fmt"
	"math"

	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/stormchart/series"
)

// The layout of the recovery panel, in SVG user units; its x axis is the restart panels'.
const (
	recoveryTop  = 34 // below the panel's title
	recoveryRow  = 96 // one record: its title, two bars, the added time, the policy's figures
	recoveryAxis = 44 // the seconds axis and its caption
	barH         = 14
)

// recoveryHeight is the height of the recovery panel of n records; none draws no panel.
func recoveryHeight(n int) int {
	if n == 0 {
		return 0
	}
	return recoveryTop + n*recoveryRow + recoveryAxis
}

// recoveryPanel draws, with its top at y0, one pair of bars per record: the seconds until every
// pod of the native twin and of the enrolled workload was restarted and Ready again, on one
// scale, and the time enrolling added.
func recoveryPanel(b *bytes.Buffer, recs []series.Recovery, y0 int) {
	longest := 0.0
	for _, r := range recs {
		longest = max(longest, seconds(r.NativeSeconds), seconds(r.EnrolledSeconds))
	}
	xs := newScale(longest, plotLeft, plotRight)
	axisY := y0 + recoveryTop + len(recs)*recoveryRow

	b.WriteString(`<g id="recovery">` + "\n")
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-weight="bold">Time until every pod is Ready again after a hang a restart cures</text>`+"\n",
		plotLeft, y0+18)
	for i := range recs {
		recoveryRecord(b, &recs[i], xs, y0+recoveryTop+i*recoveryRow)
	}
	// A baseline only: a left edge would run through the records' titles.
	fmt.Fprintf(b, `<path d="M%d %d H%d" fill="none" stroke="#333333"/>`+"\n", plotLeft, axisY, plotRight)
	for _, v := range xs.ticks() {
		x := xs.at(v)
		fmt.Fprintf(b, `<path d="M%.1f %d v5" stroke="#333333"/>`+"\n", x, axisY)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s s</text>`+"\n", x, axisY+18, number(v))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="#555555">seconds from the hang until every pod was restarted and Ready again</text>`+"\n",
		(plotLeft+plotRight)/2, axisY+34)
	b.WriteString("</g>\n")
}

// recoveryRecord draws one record with its top at y.
func recoveryRecord(b *bytes.Buffer, r *series.Recovery, xs scale, y int) {
	native, enrolled := seconds(r.NativeSeconds), seconds(r.EnrolledSeconds)
	fmt.Fprintf(b, `<g id="recovery-%s">`+"\n", escape(r.Name))
	fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", plotLeft, y+12, escape(r.Title))
	bar(b, "native", colorNative, native, xs, y+18)
	bar(b, "enrolled", colorEnrolled, enrolled, xs, y+36)
	fmt.Fprintf(b, `<text class="added" x="%d" y="%d" font-weight="bold">added by enrolling: %s (enrolled − native)</text>`+"\n",
		plotLeft, y+66, signedSeconds(enrolled-native))
	if f := r.Figures; f != nil {
		fmt.Fprintf(b, `<text class="figures" x="%d" y="%d" font-size="11" fill="#555555">the policy's figures: avoided %d, agreed %d, added p50 %d s, max %d s</text>`+"\n",
			plotLeft, y+81, f.Avoided, f.Agreed, f.AddedP50Seconds, f.AddedMaxSeconds)
	}
	b.WriteString("</g>\n")
}

// bar draws a horizontal bar from the axis to v seconds with its top at y, labelled at its end.
func bar(b *bytes.Buffer, class, color string, v float64, xs scale, y int) {
	end := xs.at(v)
	fmt.Fprintf(b, `<rect class="%s" x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", class, plotLeft, y, end-plotLeft, barH, color)
	fmt.Fprintf(b, `<text x="%.1f" y="%d" fill="%s">%s: %s s</text>`+"\n", end+6, y+barH-3, color, class, number(v))
}

// seconds rounds to whole seconds: the specs measure with a one-second poll, and the added time
// is then the difference of the two labels.
func seconds(v float64) float64 { return math.Round(v) }

func signedSeconds(v float64) string {
	if v < 0 {
		return "−" + number(-v) + " s"
	}
	return "+" + number(v) + " s"
}
