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

package wiring

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/report"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/gate"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// The writer's plan lists, for each pod of the spec in order, the probes the daemon runs with
// their intervals, then those the gate holds back with why, or the pod alone with why when the
// daemon cannot name its probes; the workers get the probes that run only.
func TestPlanAndTargets(t *testing.T) {
	entry := func(name string, run, held []probecontext.Probe, why string) gate.Entry {
		return gate.Entry{PodProbe: appsv1alpha1.PodProbe{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)}, Run: run, Held: held, Why: why}
	}
	entries := []gate.Entry{
		entry("a", []probecontext.Probe{{Name: "a-app", Container: "app", Probe: &corev1.Probe{PeriodSeconds: 5, TimeoutSeconds: 7}}},
			[]probecontext.Probe{{Name: "a-side", Container: "side"}}, "unknown-key: k1"),
		entry("b", nil, nil, "pod-not-found"),
		entry("c", []probecontext.Probe{{Name: "c-app", Container: "app", Probe: &corev1.Probe{}}}, nil, ""),
	}
	want := &report.Plan{Generation: 3, Pods: []report.PlannedPod{
		{Name: "a", Namespace: "ns", UID: "uid-a", Probes: []report.PlannedProbe{
			{Key: results.Key{PodUID: "uid-a", Container: "app", Probe: "a-app"}, IntervalSeconds: 7},
			{Key: results.Key{PodUID: "uid-a", Container: "side", Probe: "a-side"}, IntervalSeconds: 10, NotRun: "unknown-key: k1"},
		}},
		{Name: "b", Namespace: "ns", UID: "uid-b", Probes: []report.PlannedProbe{}, NotProbed: "pod-not-found"},
		{Name: "c", Namespace: "ns", UID: "uid-c", Probes: []report.PlannedProbe{
			{Key: results.Key{PodUID: "uid-c", Container: "app", Probe: "c-app"}, IntervalSeconds: 10},
		}},
	}}
	if got := Plan(3, entries); !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("plan\n%+v\nwant\n%+v", got, want)
	}
	targets := Targets(entries)
	if len(targets) != 2 || targets[0].Key.Probe != "a-app" || targets[0].Probe.PeriodSeconds != 5 || targets[1].Key.Probe != "c-app" {
		t.Errorf("targets %+v: want a-app and c-app, as the spec gives them", targets)
	}
}
