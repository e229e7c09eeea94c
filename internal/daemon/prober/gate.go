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
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// verdict is what the state of the pod and its container let a run do.
type verdict uint8

const (
	// gateProbe: the container runs, has started and is past its initial delay.
	gateProbe verdict = iota
	// gateWait: nothing this time: the pod or the container's status is not known yet, the
	// container has no ID yet, its startup probe has not passed (#13), or its initial delay (#6).
	gateWait
	// gateNotRunning: the container is not running: Unknown, never a failure (#11).
	gateNotRunning
	// gateStop: the pod is terminating or finished; the worker ends without a result (#12).
	gateStop
)

// gate decides from the pod (nil while the daemon's cache does not have it) whether t's
// container may be probed at now (docs/probe-semantics.md #6-#13). c is the container's spec,
// nil when the pod has none of that name. It returns the container's status when there is one.
func gate(pod *corev1.Pod, t *Target, c *corev1.Container, now time.Time) (verdict, *corev1.ContainerStatus) {
	if pod == nil {
		return gateWait, nil
	}
	if done(pod) {
		return gateStop, nil
	}
	cs := podutil.ContainerStatus(pod, t.Container)
	switch {
	case cs == nil || cs.ContainerID == "":
		return gateWait, cs
	case cs.State.Running == nil:
		return gateNotRunning, cs
	case c != nil && c.StartupProbe != nil && (cs.Started == nil || !*cs.Started):
		return gateWait, cs
	case now.Sub(cs.State.Running.StartedAt.Time) < time.Duration(t.Probe.InitialDelaySeconds)*time.Second:
		return gateWait, cs
	}
	return gateProbe, cs
}

// done reports whether the pod is terminating or finished: its probes never report a failure
// again (docs/probe-semantics.md #12).
func done(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil || podutil.IsFinished(pod) }
