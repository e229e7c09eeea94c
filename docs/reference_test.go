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

// Package docs holds the tests that keep the documentation true to the code: everything the
// operator counts, tells or accepts (metrics, events, conditions, hold reasons, flags, alerts)
// is in reference.md, and reference.md names nothing the code does not have.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/monitoring"
)

const root = ".."

// Sections of reference.md the test reads; each is one or more tables whose first column names
// the fact.
const (
	secMetrics      = "Metrics"
	secAlerts       = "Alerts"
	secEvents       = "Events"
	secConditions   = "Conditions"
	secHoldReasons  = "Hold reasons"
	secManagerFlags = "Manager flags"
	secDaemonFlags  = "Daemon flags"
	secCommonFlags  = "Flags of both binaries"
	secStopFlags    = "manager stop"
)

func readPage(t *testing.T, rel string) *page {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return parsePage(rel, string(b))
}

func mustRows(t *testing.T, p *page, title string) [][]string {
	t.Helper()
	rows, err := p.rows(title)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: section %q has no table rows", p.name, title)
	}
	return rows
}

// cell is column i of a row, or "" when the row is short.
func cell(row []string, i int) string {
	if i < len(row) {
		return row[i]
	}
	return ""
}

// one is the single code span of a cell naming a fact.
func one(t *testing.T, section string, row []string) string {
	t.Helper()
	c := codes(cell(row, 0))
	if len(c) != 1 {
		t.Errorf("reference.md %s: the first cell of %q must name one fact in backticks", section, strings.Join(row, " | "))
		return ""
	}
	return c[0]
}

// words are the plain words of a cell, e.g. "manager, daemon".
func words(c string) []string {
	f := strings.FieldsFunc(c, func(r rune) bool { return r == ',' || r == ' ' || r == '/' })
	slices.Sort(f)
	return f
}

// compare reports what one side has and the other lacks.
func compare[V any](t *testing.T, what string, code map[string]V, doc map[string]bool) {
	t.Helper()
	for _, k := range sortedKeys(code) {
		if !doc[k] {
			t.Errorf("%s %q is in the code but not in docs/reference.md", what, k)
		}
	}
	for _, k := range sortedKeys(doc) {
		if _, ok := code[k]; !ok {
			t.Errorf("%s %q is in docs/reference.md but not in the code", what, k)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestReferenceMatchesCode fails when docs/reference.md and the code disagree, in either
// direction, about a metric (name, type, labels, binary), an event reason (and its binary), a
// condition type and reason, a hold reason, a flag of either binary (and its default, where
// the page gives one literal value) or a shipped alert (and the metrics the alerts read).
func TestReferenceMatchesCode(t *testing.T) {
	ref := readPage(t, "docs/reference.md")
	facts, err := loadCodeFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range facts.problems {
		t.Errorf("the code cannot be read: %s", p)
	}

	t.Run("metrics", func(t *testing.T) {
		doc := map[string]bool{}
		for _, row := range mustRows(t, ref, secMetrics) {
			name := one(t, secMetrics, row)
			doc[name] = true
			m, ok := facts.metrics[name]
			if !ok {
				continue
			}
			if got := words(cell(row, 1)); !slices.Equal(got, slices.Sorted(slices.Values(m.servedBy))) {
				t.Errorf("metric %s: reference.md says served by %v, the code by %v (%s)", name, got, m.servedBy, m.pos)
			}
			if got := cell(row, 2); got != m.kind {
				t.Errorf("metric %s: reference.md says %q, the code defines a %s (%s)", name, got, m.kind, m.pos)
			}
			labels := codes(cell(row, 3))
			slices.Sort(labels)
			if !slices.Equal(labels, m.labels) {
				t.Errorf("metric %s: reference.md gives labels %v, the code %v (%s)", name, labels, m.labels, m.pos)
			}
		}
		compare(t, "metric", facts.metrics, doc)
	})

	t.Run("events", func(t *testing.T) {
		doc := map[string]bool{}
		for _, row := range mustRows(t, ref, secEvents) {
			for _, reason := range codes(cell(row, 2)) {
				doc[reason] = true
				bins, ok := facts.events[reason]
				if !ok {
					continue
				}
				slices.Sort(bins)
				if got := words(cell(row, 3)); !slices.Equal(got, bins) {
					t.Errorf("event %s: reference.md says from %v, the code emits it in %v", reason, got, bins)
				}
			}
		}
		compare(t, "event reason", facts.events, doc)
	})

	t.Run("conditions", func(t *testing.T) {
		doc := map[string]bool{}
		code := map[string]bool{}
		for c := range facts.conditions {
			code[c.condType+" / "+c.reason] = true
		}
		for _, row := range mustRows(t, ref, secConditions) {
			typ := codes(cell(row, 1))
			for _, reason := range codes(cell(row, 3)) {
				if len(typ) == 1 {
					doc[typ[0]+" / "+reason] = true
				}
			}
		}
		compare(t, "condition type / reason", code, doc)
	})

	t.Run("hold reasons", func(t *testing.T) {
		if len(facts.holdReasons) == 0 {
			t.Fatal("no hold reason found in the code: the type of hold reasons is no longer named Reason or HoldReason")
		}
		doc := map[string]bool{}
		for _, row := range mustRows(t, ref, secHoldReasons) {
			doc[one(t, secHoldReasons, row)] = true
		}
		compare(t, "hold reason", facts.holdReasons, doc)
	})

	t.Run("flags", func(t *testing.T) {
		flags, err := binaryFlags(root, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		doc := map[string]bool{}
		check := func(section string, bins ...string) {
			for _, row := range mustRows(t, ref, section) {
				name := strings.TrimPrefix(one(t, section, row), "--")
				for _, bin := range bins {
					key := bin + " --" + name
					doc[key] = true
					f, ok := flags[key]
					def := codes(cell(row, 1))
					if !ok || len(def) != 1 || cell(row, 1) != "`"+def[0]+"`" {
						continue // a default the page explains in words is not compared
					}
					if unquote(def[0]) != unquote(f.DefaultOrZero()) {
						t.Errorf("%s: reference.md gives the default %s, the binary %s", key, def[0], f.DefaultOrZero())
					}
				}
			}
		}
		check(secManagerFlags, manager)
		check(secDaemonFlags, daemon)
		check(secCommonFlags, manager, daemon)
		check(secStopFlags, manager+" "+managerStop)
		compare(t, "flag", flags, doc)
	})

	t.Run("alerts", func(t *testing.T) {
		code := map[string]string{}
		for _, a := range shippedAlerts(t) {
			code[a.Alert] = a.Labels["severity"]
		}
		doc := map[string]bool{}
		for _, row := range mustRows(t, ref, secAlerts) {
			name := one(t, secAlerts, row)
			doc[name] = true
			if sev, ok := code[name]; ok && cell(row, 1) != sev {
				t.Errorf("alert %s: reference.md gives severity %q, internal/controller/monitoring/rules.yaml %q", name, cell(row, 1), sev)
			}
		}
		compare(t, "alert", code, doc)
	})

	t.Run("alert metrics", func(t *testing.T) {
		for _, a := range shippedAlerts(t) {
			names := operatorMetric.FindAllString(a.Expr, -1)
			for _, name := range names {
				if _, ok := facts.metrics[name]; !ok {
					t.Errorf("alert %s: its expression reads %s, which no binary exports", a.Alert, name)
				}
			}
		}
	})
}

func unquote(s string) string { return strings.Trim(s, `"`) }

// shippedAlerts are the alerts of the PrometheusRule the manager keeps
// (internal/controller/monitoring/rules.yaml, embedded in the manager).
func shippedAlerts(t *testing.T) []monitoring.Alert {
	t.Helper()
	alerts, err := monitoring.Alerts()
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) == 0 {
		t.Fatal("internal/controller/monitoring/rules.yaml has no alert")
	}
	return alerts
}

// operatorMetric matches the names of the operator's own metrics in an alert expression.
var operatorMetric = regexp.MustCompile(`\benhanced_liveness_[a-z0-9_]+`)

// TestAlertsHaveRunbooks: every shipped alert has an entry in troubleshooting.md whose heading
// names it.
func TestAlertsHaveRunbooks(t *testing.T) {
	tr := readPage(t, "docs/troubleshooting.md")
	for _, a := range shippedAlerts(t) {
		if !slices.ContainsFunc(tr.headings, func(h string) bool { return strings.Contains(h, "`"+a.Alert+"`") }) {
			t.Errorf("alert %s has no runbook: no heading of docs/troubleshooting.md names it", a.Alert)
		}
	}
}
