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
	_ "embed"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/ssa"
)

// GroupVersion is the Prometheus Operator's API the objects belong to.
const GroupVersion = "monitoring.coreos.com/v1"

// Kinds of the objects the manager keeps, and their resources.
var (
	PrometheusRule = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}
	ServiceMonitor = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}
)

// RulesYAML is the PrometheusRule with every alert of the operator: the one source of the
// alerts (docs/reference.md and its test read it from here).
//
//go:embed rules.yaml
var RulesYAML []byte

// serviceMonitorYAML scrapes the manager's metrics Service.
//
//go:embed servicemonitor.yaml
var serviceMonitorYAML []byte

// Object is one kept object: its resource and its desired state.
type Object struct {
	Resource schema.GroupVersionResource
	Desired  *unstructured.Unstructured
}

// Desired returns the PrometheusRule and the ServiceMonitor for namespace, labelled as the
// manager's and owned by owner when it is not nil (the manager's Deployment, ssa.OwnedBy, so
// that uninstalling the operator by either path garbage-collects them).
func Desired(namespace string, owner *metav1.OwnerReference) ([]Object, error) {
	var out []Object
	for _, o := range []struct {
		res  schema.GroupVersionResource
		kind string
		yaml []byte
	}{
		{PrometheusRule, "PrometheusRule", RulesYAML},
		{ServiceMonitor, "ServiceMonitor", serviceMonitorYAML},
	} {
		u, err := parse(o.yaml, o.kind)
		if err != nil {
			return nil, err
		}
		u.SetNamespace(namespace)
		labels := u.GetLabels() // a copy
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, ssa.ManagedLabels())
		u.SetLabels(labels)
		if owner != nil {
			u.SetOwnerReferences([]metav1.OwnerReference{*owner})
		}
		out = append(out, Object{Resource: o.res, Desired: u})
	}
	return out, nil
}

// Names are the names of the kept objects.
func Names() []string {
	var out []string
	for _, b := range [][]byte{RulesYAML, serviceMonitorYAML} {
		var m struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if yaml.Unmarshal(b, &m) == nil {
			out = append(out, m.Metadata.Name)
		}
	}
	return out
}

// parse reads one embedded object and checks it is the kind the code expects, so a wrong edit of
// the file fails the unit tests rather than the manager.
func parse(b []byte, kind string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		return nil, fmt.Errorf("embedded %s: %w", kind, err)
	}
	if u.GetAPIVersion() != GroupVersion || u.GetKind() != kind || u.GetName() == "" {
		return nil, fmt.Errorf("embedded %s: want apiVersion %s, kind %s and a name, got %s %s %q",
			kind, GroupVersion, kind, u.GetAPIVersion(), u.GetKind(), u.GetName())
	}
	if _, ok := u.Object["spec"].(map[string]any); !ok {
		return nil, fmt.Errorf("embedded %s %s: spec must be an object", kind, u.GetName())
	}
	return u, nil
}

// Alert is one alerting rule of RulesYAML.
type Alert struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// Alerts returns the alerting rules of RulesYAML, in file order.
func Alerts() ([]Alert, error) {
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []Alert `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(RulesYAML, &rule); err != nil {
		return nil, fmt.Errorf("embedded PrometheusRule: %w", err)
	}
	var out []Alert
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	return out, nil
}
