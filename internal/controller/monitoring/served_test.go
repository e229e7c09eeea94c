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
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	k8stesting "k8s.io/client-go/testing"
)

func fakeDiscovery(resources ...string) *fakediscovery.FakeDiscovery {
	d := &fakediscovery.FakeDiscovery{Fake: &k8stesting.Fake{}}
	if resources != nil {
		list := &metav1.APIResourceList{GroupVersion: GroupVersion}
		for _, r := range resources {
			list.APIResources = append(list.APIResources, metav1.APIResource{Name: r, Namespaced: true})
		}
		d.Resources = []*metav1.APIResourceList{list}
	}
	return d
}

func TestServed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resources []string // nil: the group version is not served
		err       error
		want      []schema.GroupVersionResource
	}{
		{name: "group version not served", resources: nil},
		{name: "served without our kinds", resources: []string{"podmonitors"}},
		{name: "rules only", resources: []string{"prometheusrules"}, want: []schema.GroupVersionResource{PrometheusRule}},
		{name: "both, any order", resources: []string{"servicemonitors", "probes", "prometheusrules"},
			want: []schema.GroupVersionResource{PrometheusRule, ServiceMonitor}},
		{name: "discovery fails", resources: nil, err: errors.New("connection refused")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fakeDiscovery(tc.resources...)
			if tc.err != nil {
				d.AddReactor("get", "resource", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.err
				})
			}
			got, err := Served(d)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Served() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAbsentAPILoggedOnce: a cluster without the Prometheus Operator gets one info line, not one
// every interval, and nothing else happens (no client is used: Dynamic and Reader are nil).
func TestAbsentAPILoggedOnce(t *testing.T) {
	var lines []string
	k := &Keeper{Discovery: fakeDiscovery(), Namespace: "ns", OwnerDeployment: "mgr",
		changed: make(chan struct{}, 1)}
	k.log = funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	for range 3 {
		if !k.sync(context.Background()) {
			t.Error("sync failed without the API")
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "not served") {
		t.Errorf("log lines %q, want one saying the API is not served", lines)
	}
	if k.watch != nil {
		t.Error("a watch was started without the API")
	}
}
