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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dashboardFile is the Grafana dashboard the install ships (config/grafana: a ConfigMap of
// config/default, so also of the chart and the bundle).
const dashboardFile = "config/grafana/enhanced-liveness-operator.json"

// datasourceRef is how every query of the dashboard names its data source: the dashboard's
// datasource variable, never the UID of one Grafana's data source.
const datasourceRef = "${datasource}"

// dashboardQuery is one PromQL expression of the dashboard, with the legend it is drawn with.
type dashboardQuery struct {
	where, expr, legend string
}

// TestDashboardReadsRegisteredMetrics fails when a query of the shipped dashboard (a panel's
// target or a variable's) reads an operator metric that no binary registers, a series suffix the
// metric's type does not have (_bucket of a counter), or a label the metric does not carry (in a
// matcher, a grouping, label_values or a legend).
func TestDashboardReadsRegisteredMetrics(t *testing.T) {
	facts, err := loadCodeFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(facts.metrics) == 0 {
		t.Fatal("no metric found in the code")
	}
	queries, _, _ := readDashboard(t)
	for _, q := range queries {
		for _, p := range queryProblems(q.expr, q.legend, facts.metrics) {
			t.Errorf("%s %s: %s (query %s)", dashboardFile, q.where, p, q.expr)
		}
	}
}

// TestDashboardNamesNoDataSource fails on a query whose data source is not the dashboard's
// variable (an imported dashboard would point at a UID the cluster's Grafana does not have), and
// on a variable a query uses that the dashboard does not define.
func TestDashboardNamesNoDataSource(t *testing.T) {
	queries, d, raw := readDashboard(t)
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if ds, ok := v["datasource"].(map[string]any); ok && ds["type"] != "grafana" && ds["uid"] != datasourceRef {
				t.Errorf("%s %s: datasource %v, want uid %q", dashboardFile, where, ds, datasourceRef)
			}
			for k, x := range v {
				walk(where+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", where, i), x)
			}
		}
	}
	walk("", raw)
	defined := map[string]bool{}
	for _, v := range d.Templating.List {
		defined[v.Name] = true
	}
	if !defined[strings.Trim(datasourceRef, "${}")] {
		t.Errorf("%s: no %s variable", dashboardFile, datasourceRef)
	}
	for _, q := range queries {
		for _, m := range dashboardVariable.FindAllStringSubmatch(q.expr, -1) {
			if !strings.HasPrefix(m[1], "__") && !defined[m[1]] {
				t.Errorf("%s %s: the query uses $%s, which the dashboard does not define", dashboardFile, q.where, m[1])
			}
		}
	}
}

var dashboardVariable = regexp.MustCompile(`\$\{?(\w+)`)

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	Panels     []dashboardPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"` // a string, or an object with one
		} `json:"list"`
	} `json:"templating"`
}

type dashboardPanel struct {
	Title   string           `json:"title"`
	Panels  []dashboardPanel `json:"panels"` // a collapsed row's
	Targets []struct {
		RefID        string `json:"refId"`
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
}

// readDashboard reads the dashboard, as its type and as plain JSON, and its queries; a dashboard
// without any fails.
func readDashboard(t *testing.T) ([]dashboardQuery, *dashboard, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	d := &dashboard{}
	var raw map[string]any
	if err := json.Unmarshal(b, d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var queries []dashboardQuery
	var panels func([]dashboardPanel)
	panels = func(ps []dashboardPanel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				queries = append(queries, dashboardQuery{where: fmt.Sprintf("panel %q target %s", p.Title, tg.RefID),
					expr: tg.Expr, legend: tg.LegendFormat})
			}
			panels(p.Panels)
		}
	}
	panels(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		queries = append(queries, dashboardQuery{where: "variable " + v.Name, expr: q})
	}
	if len(queries) == 0 {
		t.Fatalf("%s has no query", dashboardFile)
	}
	for _, q := range queries {
		if strings.TrimSpace(q.expr) == "" {
			t.Errorf("%s %s: empty query", dashboardFile, q.where)
		}
	}
	return queries, d, raw
}

var (
	// A selector of an operator metric: its name and its matchers, if any.
	metricSelector = regexp.MustCompile(`\b(enhanced_liveness_[a-zA-Z0-9_:]+)\s*(?:\{([^}]*)\})?`)
	labelMatcher   = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"`)
	// Clauses that name labels of the series they apply to.
	labelClause = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	labelValues = regexp.MustCompile(`\blabel_values\(\s*(enhanced_liveness_[a-zA-Z0-9_:]+)\s*(?:\{[^}]*\})?\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)`)
	legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
)

// queryProblems lists what a dashboard query reads that the code does not register. A label of
// a grouping clause or of the legend must be carried by every operator metric the query reads.
func queryProblems(expr, legend string, metrics map[string]*metric) []string {
	var problems []string
	var common []string // the labels every metric of the query carries
	first := true
	for _, m := range metricSelector.FindAllStringSubmatch(expr, -1) {
		labels, err := seriesLabels(m[1], metrics)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, l := range matcherLabels(m[2], &problems, m[1]) {
			if !slices.Contains(labels, l) {
				problems = append(problems, fmt.Sprintf("%s has no label %q (it has %v)", m[1], l, labels))
			}
		}
		if first {
			common, first = labels, false
		} else {
			common = slices.DeleteFunc(slices.Clone(common), func(l string) bool { return !slices.Contains(labels, l) })
		}
	}
	if first && !strings.Contains(expr, "enhanced_liveness_") {
		return append(problems, "it reads no metric of the operator")
	}
	for _, m := range labelValues.FindAllStringSubmatch(expr, -1) {
		if labels, err := seriesLabels(m[1], metrics); err == nil && !slices.Contains(labels, m[2]) {
			problems = append(problems, fmt.Sprintf("label_values: %s has no label %q (it has %v)", m[1], m[2], labels))
		}
	}
	var named []string
	for _, m := range labelClause.FindAllStringSubmatch(expr, -1) {
		for l := range strings.SplitSeq(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				named = append(named, l)
			}
		}
	}
	for _, m := range legendLabel.FindAllStringSubmatch(legend, -1) {
		named = append(named, m[1])
	}
	for _, l := range named {
		if !first && !slices.Contains(common, l) {
			problems = append(problems, fmt.Sprintf("label %q is not carried by every metric the query reads (common labels: %v)", l, common))
		}
	}
	return problems
}

// seriesLabels are the labels of a series name: a registered metric's, or a histogram's
// _bucket (with le), _sum or _count, or a summary's _sum or _count.
func seriesLabels(name string, metrics map[string]*metric) ([]string, error) {
	if m, ok := metrics[name]; ok {
		if m.kind == "summary" {
			return append(slices.Clone(m.labels), "quantile"), nil
		}
		return m.labels, nil
	}
	for _, s := range []struct{ suffix, kinds, extra string }{
		{"_bucket", "histogram", "le"},
		{"_sum", "histogram summary", ""},
		{"_count", "histogram summary", ""},
	} {
		base, ok := strings.CutSuffix(name, s.suffix)
		if !ok {
			continue
		}
		m, ok := metrics[base]
		if !ok {
			break
		}
		if !slices.Contains(strings.Fields(s.kinds), m.kind) {
			return nil, fmt.Errorf("%s: %s is a %s, which has no %s series", name, base, m.kind, s.suffix)
		}
		labels := slices.Clone(m.labels)
		if s.extra != "" {
			labels = append(labels, s.extra)
		}
		return labels, nil
	}
	return nil, fmt.Errorf("it reads %s, which no binary registers", name)
}

// matcherLabels are the label names of a selector's matchers; text between them that is not a
// matcher is a problem (the test would not see what it names).
func matcherLabels(matchers string, problems *[]string, name string) []string {
	var labels []string
	for _, m := range labelMatcher.FindAllStringSubmatch(matchers, -1) {
		labels = append(labels, m[1])
	}
	if rest := strings.Trim(labelMatcher.ReplaceAllString(matchers, ""), " ,"); rest != "" {
		*problems = append(*problems, fmt.Sprintf("%s{%s}: cannot read the matchers (left %q)", name, matchers, rest))
	}
	return labels
}

// TestQueryProblems: the check finds each way a query can read what the code does not register,
// and passes the forms the dashboard uses.
func TestQueryProblems(t *testing.T) {
	metrics := map[string]*metric{
		"enhanced_liveness_restarts_avoided_total": {kind: "counter", labels: []string{"pod_namespace", "mode", "reason"}},
		"enhanced_liveness_restarts_agreed_total":  {kind: "counter", labels: []string{"pod_namespace", "mode"}},
		"enhanced_liveness_restart_added_seconds":  {kind: "histogram", labels: []string{"pod_namespace", "mode"}},
		"enhanced_liveness_held_pods":              {kind: "gauge", labels: []string{"reason"}},
	}
	for _, tc := range []struct {
		name, expr, legend string
		want               []string // a substring of each problem, in order
	}{
		{"counter with matchers and grouping", `sum by (pod_namespace, mode, reason) (increase(enhanced_liveness_restarts_avoided_total{pod_namespace=~"$namespace", mode=~"$mode"}[$__range]))`, "{{reason}}", nil},
		{"histogram quantile", `histogram_quantile(0.99, sum by (pod_namespace, le) (rate(enhanced_liveness_restart_added_seconds_bucket{mode=~"$mode", le="0.5"}[1h])))`, "", nil},
		{"histogram count", `sum(increase(enhanced_liveness_restart_added_seconds_count[$__range]))`, "", nil},
		{"two metrics, a label both carry", `sum by (mode) (enhanced_liveness_restarts_avoided_total) / sum by (mode) (enhanced_liveness_restarts_agreed_total)`, "{{mode}}", nil},
		{"label_values", `label_values(enhanced_liveness_held_pods, reason)`, "", nil},
		{"unknown metric", `sum(rate(enhanced_liveness_restarts_bogus_total[5m]))`, "", []string{"enhanced_liveness_restarts_bogus_total, which no binary registers"}},
		{"no operator metric", `sum(rate(up[5m]))`, "", []string{"reads no metric of the operator"}},
		{"bucket of a counter", `rate(enhanced_liveness_restarts_agreed_total_bucket[5m])`, "", []string{"is a counter, which has no _bucket series"}},
		{"unknown matcher label", `enhanced_liveness_held_pods{namespace="x"}`, "", []string{`has no label "namespace"`}},
		{"le on a plain series", `enhanced_liveness_restart_added_seconds_count{le="1"}`, "", []string{`has no label "le"`}},
		{"unreadable matcher", `enhanced_liveness_held_pods{reason=~'x'}`, "", []string{"cannot read the matchers"}},
		{"grouping by a missing label", `sum by (reason) (enhanced_liveness_restarts_agreed_total)`, "", []string{`label "reason" is not carried`}},
		{"grouping by a label one metric lacks", `sum by (reason) (enhanced_liveness_restarts_avoided_total) / on (reason) sum(enhanced_liveness_restarts_agreed_total)`, "",
			[]string{`label "reason" is not carried`, `label "reason" is not carried`}},
		{"legend label the metric lacks", `max(enhanced_liveness_held_pods)`, "{{pod_namespace}}", []string{`label "pod_namespace" is not carried`}},
		{"label_values of a missing label", `label_values(enhanced_liveness_held_pods, mode)`, "", []string{`label_values: enhanced_liveness_held_pods has no label "mode"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := queryProblems(tc.expr, tc.legend, metrics)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d: %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d: %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}
