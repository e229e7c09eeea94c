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

package apps

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/probecontext"
)

// ReasonNotMapped is the event of a pod one of whose probes cannot be handed to the daemon (the
// pod's others still are). A pod whose probe context is not sealed is left out silently: the seal
// controller (internal/controller/trust) reports why.
const ReasonNotMapped = "LivenessProbeNotMapped"

// mappingProblem is a probe of an enrolled pod that cannot be handed to the daemon.
type mappingProblem struct {
	pod     *corev1.Pod
	reason  string
	message string
}

// desiredPodProbes computes the spec.podProbes of one node from the pods bound to it: every
// enrolled, running (not finished, not terminating) pod with an IP whose probe context trusted
// accepts (its seal verifies), one probe per container entry of its probe context, with named ports resolved and
// defaults explicit. Pods are sorted by namespace, name and UID so that equal input gives an
// equal spec.
func desiredPodProbes(pods []corev1.Pod, trusted func(*corev1.Pod) error) ([]appsv1alpha1.PodProbe, []mappingProblem) {
	var out []appsv1alpha1.PodProbe
	var problems []mappingProblem
	for i := range pods {
		pod := &pods[i]
		if !mapped(pod) {
			continue
		}
		if trusted(pod) != nil {
			continue
		}
		pctx, errs := probecontext.FromAnnotations(pod.Annotations)
		if len(errs) > 0 {
			problems = append(problems, notMapped(pod, "probe context annotation: "+errs.ToAggregate().Error()))
			continue
		}
		var probes []appsv1alpha1.ContainerProbe
		for _, e := range pctx.Entries {
			pc, ok := podutil.FindRestartable(&pod.Spec, e.Name)
			if !ok {
				problems = append(problems, notMapped(pod, fmt.Sprintf("probe context names container %q, which the pod does not have", e.Name)))
				continue
			}
			if !podutil.RestartedAfterStop(&pod.Spec, pc) {
				// Enrolled by an earlier version: a restart through a CRI stop would leave it stopped.
				problems = append(problems, notMapped(pod, fmt.Sprintf("container %q has restart policy %s: the kubelet would not "+
					"start it again after the operator stopped it (re-create the pod to give it back its native livenessProbe)",
					e.Name, podutil.EffectiveRestartPolicy(&pod.Spec, pc.Container))))
				continue
			}
			resolved, err := probecontext.Resolve(e.LivenessProbe, pc.Container)
			if err != nil {
				problems = append(problems, notMapped(pod, err.Error()))
				continue
			}
			probes = append(probes, appsv1alpha1.ContainerProbe{
				Name: probecontext.ProbeName(pod.Name, e.Name), ContainerName: e.Name, Probe: *resolved,
			})
		}
		if len(probes) == 0 {
			continue
		}
		out = append(out, appsv1alpha1.PodProbe{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, IP: pod.Status.PodIP, Probes: probes,
		})
	}
	slices.SortFunc(out, func(a, b appsv1alpha1.PodProbe) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	return out, problems
}

func notMapped(pod *corev1.Pod, message string) mappingProblem {
	return mappingProblem{pod, ReasonNotMapped, "liveness probe not handed to the node daemon: " + message}
}

// mapped reports whether a pod's probes belong in its node's NodePodProbe.
func mapped(pod *corev1.Pod) bool {
	return pod.Labels[appsv1alpha1.LabelEnrolled] == appsv1alpha1.TrueValue &&
		pod.Spec.NodeName != "" &&
		pod.Status.PodIP != "" &&
		pod.DeletionTimestamp == nil &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}
