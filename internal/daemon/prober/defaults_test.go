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

package prober

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The daemon defaults what it reads again, as the apiserver would have: a hand-written or older
// NodePodProbe spec with unset or invalid numbers must neither spin nor stall a worker.
func TestWorker_2_DaemonDefaultsUnsetAndInvalidNumbers(t *testing.T) {
	httpGet := func(path string, scheme corev1.URIScheme) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(80), Scheme: scheme}}
	}
	cases := []struct {
		name    string
		in, out corev1.Probe
	}{
		{"unset", corev1.Probe{ProbeHandler: httpGet("", "")},
			corev1.Probe{ProbeHandler: httpGet("/", corev1.URISchemeHTTP), TimeoutSeconds: 1, PeriodSeconds: 10,
				SuccessThreshold: 1, FailureThreshold: 3}},
		{"negative", corev1.Probe{ProbeHandler: httpGet("", ""), InitialDelaySeconds: -1, TimeoutSeconds: -1,
			PeriodSeconds: -1, SuccessThreshold: -1, FailureThreshold: -1},
			corev1.Probe{ProbeHandler: httpGet("/", corev1.URISchemeHTTP), TimeoutSeconds: 1, PeriodSeconds: 10,
				SuccessThreshold: 1, FailureThreshold: 3}},
		{"set values are kept; success threshold is always 1",
			corev1.Probe{ProbeHandler: httpGet("/healthz", corev1.URISchemeHTTPS), InitialDelaySeconds: 4,
				TimeoutSeconds: 2, PeriodSeconds: 5, SuccessThreshold: 3, FailureThreshold: 7},
			corev1.Probe{ProbeHandler: httpGet("/healthz", corev1.URISchemeHTTPS), InitialDelaySeconds: 4,
				TimeoutSeconds: 2, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 7}},
	}
	for _, c := range cases {
		in := *c.in.DeepCopy()
		got := withDefaults(in)
		if !equality.Semantic.DeepEqual(got, c.out) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.out)
		}
		if !equality.Semantic.DeepEqual(in, c.in) {
			t.Errorf("%s: the spec's own probe was changed: %+v", c.name, in)
		}
	}
}

// The report writer refreshes a Failed result by the probe's interval, taken after the defaults:
// the period, or the timeout when a run may outlast it.
func TestTarget_IntervalSecondsOfTheDefaultedProbe(t *testing.T) {
	for _, c := range []struct {
		name  string
		probe corev1.Probe
		want  int32
	}{
		{"unset: the default period", corev1.Probe{}, 10},
		{"negative: the default period", corev1.Probe{PeriodSeconds: -1, TimeoutSeconds: -1}, 10},
		{"a period over the default timeout", corev1.Probe{PeriodSeconds: 1}, 1},
		{"a timeout over the period", corev1.Probe{PeriodSeconds: 10, TimeoutSeconds: 30}, 30},
	} {
		tg := Target{Probe: c.probe}
		if got := tg.IntervalSeconds(); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
