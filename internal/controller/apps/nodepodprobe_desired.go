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
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
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
	var from []*corev1.Pod // from[i] is the pod of out[i]
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
		entry := appsv1alpha1.PodProbe{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, IP: pod.Status.PodIP, Probes: probes,
		}
		// One entry the API server would refuse must not block the node's other pods: it is
		// left out, loudly (the pod webhook keeps such pods native; this one got past it).
		if errs := appsv1alpha1.ValidatePodProbe(&entry, field.NewPath("spec", "podProbes[]")); len(errs) > 0 {
			problems = append(problems, notMapped(pod, "the NodePodProbe schema would refuse the pod's entry: "+
				errs.ToAggregate().Error()+"; the pod is not probed (re-create it: the pod webhook then leaves it its native livenessProbe)"))
			continue
		}
		out = append(out, entry)
		from = append(from, pod)
	}
	out, problems = capPods(out, from, problems)
	slices.SortFunc(out, func(a, b appsv1alpha1.PodProbe) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	return out, problems
}

// capPods keeps at most MaxPodProbesPerNode entries, the pods created first: a node with more
// enrolled pods than a NodePodProbe holds still has the others probed, and the newest, left
// out, are reported.
func capPods(out []appsv1alpha1.PodProbe, from []*corev1.Pod, problems []mappingProblem) ([]appsv1alpha1.PodProbe, []mappingProblem) {
	if len(out) <= appsv1alpha1.MaxPodProbesPerNode {
		return out, problems
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		pa, pb := from[a], from[b]
		return cmp.Or(pa.CreationTimestamp.Compare(pb.CreationTimestamp.Time),
			cmp.Compare(pa.Namespace, pb.Namespace), cmp.Compare(pa.Name, pb.Name), cmp.Compare(pa.UID, pb.UID))
	})
	kept := make([]appsv1alpha1.PodProbe, 0, appsv1alpha1.MaxPodProbesPerNode)
	for n, i := range order {
		if n < appsv1alpha1.MaxPodProbesPerNode {
			kept = append(kept, out[i])
			continue
		}
		problems = append(problems, notMapped(from[i], fmt.Sprintf("the node has more than %d enrolled pods and a "+
			"NodePodProbe holds at most %d (spec.podProbes: maxItems %d); the pods created last are not probed",
			appsv1alpha1.MaxPodProbesPerNode, appsv1alpha1.MaxPodProbesPerNode, appsv1alpha1.MaxPodProbesPerNode)))
	}
	return kept, problems
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
