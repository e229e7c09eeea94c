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

package facts

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// Why an enrolled container is not probed (Unprobed.Reason).
const (
	// UnprobedNotMapped: the pod is not in its node's NodePodProbe (the node has none, or the
	// probe mapping left the pod out: see the NodePodProbe's Mapped condition and the pod's events).
	UnprobedNotMapped = "NotMapped"
	// UnprobedNoReport: no daemon has ever written the node's NodePodProbeReport (no daemon runs
	// on the node, or it has not started yet).
	UnprobedNoReport = "NoDaemonReport"
	// UnprobedDaemonNotReporting: the node's daemon Lease is not renewed.
	UnprobedDaemonNotReporting = "DaemonNotReporting"
	// UnprobedRefused: the daemon reports the probe NotProbed (its trust gate refused it, the pod
	// was not found, ...), or the whole pod not probed (it cannot name its probes).
	UnprobedRefused = "NotProbed"
	// UnprobedOmitted: the node's report leaves out the results of the pod's namespace, over its
	// share of the report's byte budget, but for some of its Failed states
	// (status.omittedNamespaces): the probes it does not list Failed.
	UnprobedOmitted = "ReportOverBudget"
)

// Unprobed is what a pod's node says of its enrolled containers that no daemon probes. The
// webhook moved their liveness probe to the operator, so such a container has no liveness; a pod
// admitted in Shadow kept its native probe, and is never counted.
type Unprobed struct {
	// Containers is the number of the pod's enrolled containers no daemon probes.
	Containers int
	// Reason is why (Unprobed* constants), Message says more; both empty when Containers is 0.
	Reason, Message string
}

// Unprobed reads which of an enrolled pod's containers no daemon probes. A pod that is not
// scheduled, finished, terminating or admitted in Shadow counts nowhere. A probe the report does not list, or lists
// with any other state, is probed: a pod the mapping just added and the daemon has not acted on
// yet is not told apart from one that runs (the alert waits for a lasting state). In a namespace
// the report cuts to its Failed states (omittedNamespaces), only a probe listed Failed is.
func (r *Reader) Unprobed(ctx context.Context, pod *corev1.Pod) (Unprobed, error) {
	node := pod.Spec.NodeName
	if node == "" || pod.DeletionTimestamp != nil || podutil.IsFinished(pod) || appsv1alpha1.AdmittedInShadow(pod.Labels) {
		return Unprobed{}, nil
	}
	nr, err := r.nodeReport(ctx, node)
	if err != nil {
		return Unprobed{}, err
	}
	if !nr.named[pod.UID] {
		return Unprobed{Containers: enrolledContainers(pod), Reason: UnprobedNotMapped,
			Message: fmt.Sprintf("the pod is not in the NodePodProbe of node %s", node)}, nil
	}
	rep := nr.pod(pod)
	all := max(len(rep.probes), 1)
	if !nr.written {
		return Unprobed{Containers: all, Reason: UnprobedNoReport,
			Message: fmt.Sprintf("no daemon has written the NodePodProbeReport of node %s", node)}, nil
	}
	d, err := r.daemon(ctx, node)
	if err != nil {
		return Unprobed{}, err
	}
	if !d.Reporting {
		return Unprobed{Containers: all, Reason: UnprobedDaemonNotReporting,
			Message: fmt.Sprintf("the daemon of node %s is not renewing its Lease", node)}, nil
	}
	if rep.notProbed != "" {
		return Unprobed{Containers: all, Reason: rep.reason, Message: rep.notProbed}, nil
	}
	var u Unprobed
	for i := range rep.probes {
		s := stateOf(rep.status, rep.probes[i].Name)
		switch {
		case rep.omitted != "" && (s == nil || !s.Failed()):
			if u.Containers++; u.Reason == "" {
				u.Reason, u.Message = UnprobedOmitted, rep.omitted
			}
		case s != nil && s.State == appsv1alpha1.ProbeNotProbed:
			if u.Containers++; u.Reason == "" {
				u.Reason = UnprobedRefused
				u.Message = fmt.Sprintf("the daemon of node %s does not run probe %s: %s", node, s.Name, s.Message)
			}
		}
	}
	return u, nil
}

// enrolledContainers is the number of containers whose probes the pod's probe context moved
// to the operator; at least one (a context that does not decode still took a probe away).
func enrolledContainers(pod *corev1.Pod) int {
	pc, errs := probecontext.FromAnnotations(pod.Annotations)
	if len(errs) > 0 || len(pc.Entries) == 0 {
		return 1
	}
	return len(pc.Entries)
}
