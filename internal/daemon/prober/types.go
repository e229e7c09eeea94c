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

// Package prober runs the node's liveness probes: one worker per (pod UID, container, probe),
// with the kubelet's worker semantics (docs/probe-semantics.md #6-#15): each run is gated on the
// pod's state, run by the runner of the probe's kind (package check) and recorded in a small run
// state; a result cache keyed by the same triple, events and metrics on transitions, and a
// status writer that reports the results in few, coalesced, conflict-safe patches.
package prober

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
)

// Key identifies a probe worker and its result. Never the containerID: a container restart must
// not orphan a result, and a result must never be attributed to another pod's container.
type Key struct {
	PodUID    types.UID
	Container string
	Probe     string
}

func (k Key) String() string { return fmt.Sprintf("%s/%s/%s", k.PodUID, k.Container, k.Probe) }

// Target is one probe to run: a probe of a pod the NodePodProbe names, from the pod's sealed
// probe context. HTTP, TCP and gRPC probes that name no host dial the pod's address as the
// container runtime reports it for the pod's sandbox (cri.Addresses).
type Target struct {
	Key
	PodName, Namespace string
	Probe              corev1.Probe
	// NotRun, when set, says why the daemon does not run this probe (its trust gate holds it
	// back): the report lists it NotProbed.
	NotRun string
}

// Default values of a liveness probe (docs/probe-semantics.md #2). The manager fills them already; the
// daemon applies them again so that a hand-written or older spec cannot make it spin or stall.
const (
	DefaultTimeoutSeconds   = 1
	DefaultPeriodSeconds    = 10
	DefaultFailureThreshold = 3
)

// withDefaults returns p with unset or invalid numbers replaced by the defaults, and its handler
// defaulted as its kind says (an HTTP probe's path and scheme). A liveness probe's
// successThreshold is always 1 (the API rejects anything else).
func withDefaults(p corev1.Probe) corev1.Probe {
	if p.TimeoutSeconds <= 0 {
		p.TimeoutSeconds = DefaultTimeoutSeconds
	}
	if p.PeriodSeconds <= 0 {
		p.PeriodSeconds = DefaultPeriodSeconds
	}
	p.SuccessThreshold = 1
	if p.FailureThreshold <= 0 {
		p.FailureThreshold = DefaultFailureThreshold
	}
	if p.InitialDelaySeconds < 0 {
		p.InitialDelaySeconds = 0
	}
	check.SetDefaults(&p.ProbeHandler)
	return p
}
