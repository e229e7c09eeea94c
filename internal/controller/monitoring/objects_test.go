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

package monitoring

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDesired(t *testing.T) {
	for _, tc := range []struct {
		name  string
		owner *metav1.OwnerReference
	}{
		{"owned by the manager Deployment", &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "mgr", UID: "u-1", Controller: new(true)}},
		{"no owner (make run)", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Desired("el-system", tc.owner)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range objs {
				u := o.Desired
				kinds = append(kinds, u.GetKind())
				if u.GetNamespace() != "el-system" {
					t.Errorf("%s: namespace %q, want el-system", u.GetKind(), u.GetNamespace())
				}
				if u.GetLabels()["app.kubernetes.io/managed-by"] != "enhanced-liveness-operator" {
					t.Errorf("%s: labels %v lack managed-by enhanced-liveness-operator", u.GetKind(), u.GetLabels())
				}
				if o.Resource.Group+"/"+o.Resource.Version != u.GetAPIVersion() {
					t.Errorf("%s: resource %v does not match apiVersion %s", u.GetKind(), o.Resource, u.GetAPIVersion())
				}
				refs := u.GetOwnerReferences()
				switch {
				case tc.owner == nil && len(refs) != 0:
					t.Errorf("%s: owner references %v without an owner", u.GetKind(), refs)
				case tc.owner != nil && (len(refs) != 1 || refs[0].UID != tc.owner.UID || refs[0].Kind != "Deployment"):
					t.Errorf("%s: owner references %v, want the Deployment %s", u.GetKind(), refs, tc.owner.UID)
				}
			}
			if !slices.Equal(kinds, []string{"PrometheusRule", "ServiceMonitor"}) {
				t.Errorf("kinds %v, want PrometheusRule and ServiceMonitor", kinds)
			}
			if names := Names(); len(names) != 2 || names[0] != objs[0].Desired.GetName() || names[1] != objs[1].Desired.GetName() {
				t.Errorf("Names() = %v, objects named %s and %s", names, objs[0].Desired.GetName(), objs[1].Desired.GetName())
			}
		})
	}
}

// TestNamesMatchRBAC: the manager may update these objects by name only (the kubebuilder RBAC
// marker in monitoring.go); a renamed object could be created but never put back in shape.
func TestNamesMatchRBAC(t *testing.T) {
	want := []string{"enhanced-liveness-operator-alerts", "enhanced-liveness-operator-controller-manager-metrics-monitor"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, the RBAC marker grants updates of %v", got, want)
	}
}

func TestServiceMonitorScrapesTheMetricsService(t *testing.T) {
	objs, err := Desired("ns", nil)
	if err != nil {
		t.Fatal(err)
	}
	sm := objs[1].Desired
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	// The labels of config/default/metrics_service.yaml and of the bundle's metrics Service.
	if sel["control-plane"] != "controller-manager" || sel["app.kubernetes.io/name"] != "enhanced-liveness-operator" {
		t.Errorf("selector %v does not select the metrics Service", sel)
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("endpoints %v, want one", eps)
	}
	ep := eps[0].(map[string]any)
	if ep["port"] != "https" || ep["scheme"] != "https" || ep["bearerTokenFile"] == nil {
		t.Errorf("endpoint %v: want port https, scheme https, a bearer token", ep)
	}
}

func TestParseRejectsAWrongFile(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"not yaml", "a: [", "embedded PrometheusRule"},
		{"other kind", "apiVersion: monitoring.coreos.com/v1\nkind: PodMonitor\nmetadata: {name: x}\nspec: {}\n", "want apiVersion"},
		{"no name", "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nspec: {}\n", "a name"},
		{"no spec", "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: x}\n", "spec must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.yaml), "PrometheusRule")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parse: error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestAlerts checks what Prometheus would reject or what would make an alert useless: no
// PromQL parser is linked (it would pull Prometheus into go.mod), so the expression is checked
// for balanced brackets and quotes; docs/reference_test.go checks that the metrics it names are
// exported.
func TestAlerts(t *testing.T) {
	alerts, err := Alerts()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range alerts {
		if slices.Contains(names, a.Alert) {
			t.Errorf("alert %s: defined twice", a.Alert)
		}
		names = append(names, a.Alert)
		if err := balanced(a.Expr); err != "" || strings.TrimSpace(a.Expr) == "" {
			t.Errorf("alert %s: expr %q: %s", a.Alert, a.Expr, err)
		}
		if _, err := model.ParseDuration(a.For); err != nil {
			t.Errorf("alert %s: for %q: %v", a.Alert, a.For, err)
		}
		if !slices.Contains([]string{"info", "warning", "critical"}, a.Labels["severity"]) {
			t.Errorf("alert %s: severity %q, want info, warning or critical", a.Alert, a.Labels["severity"])
		}
		if a.Annotations["summary"] == "" || a.Annotations["description"] == "" {
			t.Errorf("alert %s: needs a summary and a description", a.Alert)
		}
	}
	if !slices.Contains(names, "EnhancedLivenessHoldOverMaxHold") {
		t.Errorf("alerts %v lack EnhancedLivenessHoldOverMaxHold", names)
	}
}

func TestBalanced(t *testing.T) {
	for expr, want := range map[string]string{
		`sum(rate(x{a="b"}[5m])) > 0`: "",
		`sum(rate(x[5m]) > 0`:         "unclosed (",
		`x{a="b"]`:                    `"]" closes "{"`,
		`x{a="b}`:                     "unclosed quote",
		`x)`:                          `")" closes nothing`,
	} {
		if got := balanced(expr); got != want {
			t.Errorf("balanced(%q) = %q, want %q", expr, got, want)
		}
	}
}

// balanced returns what is wrong with the brackets and quotes of a PromQL expression, or "".
func balanced(expr string) string {
	pairs := map[rune]rune{')': '(', ']': '[', '}': '{'}
	var stack []rune
	var quote rune
	for _, c := range expr {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, c)
		case pairs[c] != 0:
			if len(stack) == 0 {
				return `"` + string(c) + `" closes nothing`
			}
			if top := stack[len(stack)-1]; top != pairs[c] {
				return `"` + string(c) + `" closes "` + string(top) + `"`
			}
			stack = stack[:len(stack)-1]
		}
	}
	if quote != 0 {
		return "unclosed quote"
	}
	if len(stack) > 0 {
		return "unclosed " + string(stack[len(stack)-1])
	}
	return ""
}
