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

package docs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/monitoring"
)

// TestAlertsFireForALastingHold fails on a shipped alert that cannot fire for a condition that
// simply lasts: one that waits (`for`) at least as long as the range of the counter it reads (a
// single increase has left the range before the wait is over, so it never fires), or one that
// reads a counter of holds (it counts a hold when it starts: a hold that lasts hours adds nothing
// after its start). An alert on holds reads the gauges of the holds there are now
// (enhanced_liveness_held_pods, enhanced_liveness_oldest_hold_seconds,
// enhanced_liveness_holds_over_max_hold), with `for` on that level.
func TestAlertsFireForALastingHold(t *testing.T) {
	facts, err := loadCodeFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for name, m := range facts.metrics {
		kinds[name] = m.kind
	}
	for _, a := range shippedAlerts(t) {
		for _, p := range lastingProblems(a, kinds) {
			t.Errorf("alert %s: %s", a.Alert, p)
		}
	}
}

// TestLastingProblems: the check finds the two alerts that could not fire for a lasting hold
// (before 0.1.0), and passes the gauges that replaced them.
func TestLastingProblems(t *testing.T) {
	kinds := map[string]string{
		"enhanced_liveness_restarts_held_total":      "counter",
		"enhanced_liveness_restarts_requested_total": "counter",
		"enhanced_liveness_held_pods":                "gauge",
	}
	for _, tc := range []struct {
		name, expr, wait string
		want             []string
	}{
		{"held for long, a counter over its wait", `sum by (reason) (increase(enhanced_liveness_restarts_held_total{reason!~"DryRun|Disabled"}[30m])) > 0`, "30m",
			[]string{"waits 30m", "counter of holds"}},
		{"daemon not reporting, a counter over its wait", `sum(increase(enhanced_liveness_restarts_held_total{reason="DaemonNotReporting"}[10m])) > 0`, "10m",
			[]string{"waits 10m", "counter of holds"}},
		{"a counter of holds within its wait", `sum(increase(enhanced_liveness_restarts_held_total[10m])) > 0`, "5m",
			[]string{"counter of holds"}},
		{"another counter over its wait", `rate(enhanced_liveness_restarts_requested_total[5m]) > 1`, "10m",
			[]string{"waits 10m"}},
		{"another counter within its wait", `rate(enhanced_liveness_restarts_requested_total[15m]) > 1`, "10m", nil},
		{"a gauge of holds", `max by (reason) (enhanced_liveness_held_pods{reason!~"DryRun|Disabled"}) > 0`, "30m", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lastingProblems(monitoring.Alert{Alert: "X", Expr: tc.expr, For: tc.wait}, kinds)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d containing %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %q, want one containing %q", got[i], w)
				}
			}
		})
	}
}

// rangeOfCounter matches a function over a range of an operator metric: the function, the
// metric and the range.
var rangeOfCounter = regexp.MustCompile(`\b(increase|rate|irate|delta|changes|resets)\(\s*(enhanced_liveness_[a-z0-9_]+)\s*(?:\{[^}]*\})?\s*\[([0-9a-z]+)\]`)

// lastingProblems says why an alert cannot fire for a condition that lasts; kinds are the
// operator's metrics by name (counter, gauge, histogram, summary).
func lastingProblems(a monitoring.Alert, kinds map[string]string) []string {
	var out []string
	wait := time.Duration(0)
	if a.For != "" {
		d, err := model.ParseDuration(a.For)
		if err != nil {
			return []string{fmt.Sprintf("for %q: %v", a.For, err)}
		}
		wait = time.Duration(d)
	}
	for _, m := range rangeOfCounter.FindAllStringSubmatch(a.Expr, -1) {
		fn, name, window := m[1], m[2], m[3]
		d, err := model.ParseDuration(window)
		if err != nil {
			out = append(out, fmt.Sprintf("range [%s] of %s: %v", window, name, err))
			continue
		}
		if kinds[name] == "counter" && wait >= time.Duration(d) {
			out = append(out, fmt.Sprintf("waits %s (for) on %s(%s[%s]): one increase has left the range before the wait is over, so it never fires", a.For, fn, name, window))
		}
	}
	for _, name := range operatorMetric.FindAllString(a.Expr, -1) {
		if kinds[name] == "counter" && (strings.Contains(name, "held") || strings.Contains(name, "hold")) {
			out = append(out, fmt.Sprintf("reads %s, a counter of holds: it grows when a hold starts, not while it lasts; read the gauges of the holds there are now (enhanced_liveness_held_pods, enhanced_liveness_oldest_hold_seconds)", name))
			break
		}
	}
	return out
}
