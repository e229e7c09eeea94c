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
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// Target is one probe to run: a probe of a pod the NodePodProbe names, from the pod's sealed
// probe context. HTTP, TCP and gRPC probes that name no host dial the pod's address as the
// container runtime reports it for the pod's sandbox (cri.Addresses).
type Target struct {
	results.Key
	PodName, Namespace string
	Probe              corev1.Probe
}

// IntervalSeconds is the probe's interval (appsv1alpha1.ProbeInterval) once defaulted: how often
// a result comes at the most, from which the report writer knows when a Failed result it shows
// is due a refresh.
func (t *Target) IntervalSeconds() int32 {
	p := withDefaults(t.Probe)
	return appsv1alpha1.ProbeInterval(p.PeriodSeconds, p.TimeoutSeconds)
}

// withDefaults returns p with unset or invalid numbers replaced by the API server's defaults
// (podutil's, docs/probe-semantics.md #2), and its handler defaulted as its kind says (an HTTP
// probe's path and scheme). The manager fills them already; the daemon applies them again so that
// a hand-written or older spec cannot make it spin or stall. A liveness probe's successThreshold
// is always 1 (the API rejects anything else).
func withDefaults(p corev1.Probe) corev1.Probe {
	if p.TimeoutSeconds <= 0 {
		p.TimeoutSeconds = podutil.DefaultProbeTimeoutSeconds
	}
	if p.PeriodSeconds <= 0 {
		p.PeriodSeconds = podutil.DefaultProbePeriodSeconds
	}
	p.SuccessThreshold = 1
	if p.FailureThreshold <= 0 {
		p.FailureThreshold = podutil.DefaultProbeFailureThreshold
	}
	if p.InitialDelaySeconds < 0 {
		p.InitialDelaySeconds = 0
	}
	check.SetDefaults(&p.ProbeHandler)
	return p
}
