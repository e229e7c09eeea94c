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

package nodepodprobe

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
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

// desiredPodProbes computes the spec.podProbes of one node from the pods bound to it: an entry
// naming each enrolled, running (not finished, not terminating) pod with an IP whose probe
// context trusted accepts (its seal verifies) and gives at least one probe
// (probecontext.ProbesOf; the daemon reads the probes from the pod). Entries are sorted by
// namespace, name and UID so that equal input gives an equal spec. leftOut counts, by namespace,
// the pods that did not fit (capPods).
func desiredPodProbes(pods []corev1.Pod, trusted func(*corev1.Pod) error) (out []appsv1alpha1.PodProbe, problems []mappingProblem, leftOut map[string]int) {
	var from []*corev1.Pod // from[i] is the pod of out[i]
	for i := range pods {
		pod := &pods[i]
		if !mapped(pod) || trusted(pod) != nil {
			continue
		}
		probes, bad, err := probecontext.PodProbes(pod)
		if err != nil {
			problems = append(problems, notMapped(pod, "probe context annotation: "+err.Error()))
			continue
		}
		for _, b := range bad {
			problems = append(problems, notMapped(pod, b.Message))
		}
		if len(probes) == 0 {
			continue
		}
		if len(probes) > appsv1alpha1.MaxProbesPerPod { // the pod webhook keeps such pods native
			problems = append(problems, notMapped(pod, fmt.Sprintf("the pod has %d liveness probes; a NodePodProbeReport "+
				"lists at most %d per pod (re-create it: the pod webhook then leaves it its native livenessProbe)",
				len(probes), appsv1alpha1.MaxProbesPerPod)))
			continue
		}
		entry := appsv1alpha1.PodProbe{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}
		// One entry the API server would refuse must not block the node's other pods: it is
		// left out, loudly (the API server's own limits on pods make this unreachable).
		if errs := appsv1alpha1.ValidatePodProbe(&entry, field.NewPath("spec", "podProbes[]")); len(errs) > 0 {
			problems = append(problems, notMapped(pod, "the NodePodProbe schema would refuse the pod's entry: "+
				errs.ToAggregate().Error()+"; the pod is not probed"))
			continue
		}
		out = append(out, entry)
		from = append(from, pod)
	}
	out, dropped := capPods(out, from, appsv1alpha1.MaxPodProbesPerNode)
	for _, pod := range dropped {
		problems = append(problems, notMapped(pod, fmt.Sprintf("the node has more than %d enrolled pods, a NodePodProbe holds "+
			"at most %d (spec.podProbes: maxItems %d), and namespace %s has the most of them on the node: some of its pods are not probed",
			appsv1alpha1.MaxPodProbesPerNode, appsv1alpha1.MaxPodProbesPerNode, appsv1alpha1.MaxPodProbesPerNode, pod.Namespace)))
		if leftOut == nil {
			leftOut = map[string]int{}
		}
		leftOut[pod.Namespace]++
	}
	slices.SortFunc(out, func(a, b appsv1alpha1.PodProbe) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	return out, problems, leftOut
}

// capPods keeps at most limit entries. While there are too many, a pod of the namespace with the
// most entries left is dropped (ties: the namespace named first), its newest pod first: the
// namespace that takes the most of the node's share loses pods, never another, and the node's
// other pods stay probed. dropped are the pods left out.
func capPods(out []appsv1alpha1.PodProbe, from []*corev1.Pod, limit int) (kept []appsv1alpha1.PodProbe, dropped []*corev1.Pod) {
	if len(out) <= limit {
		return out, nil
	}
	byNS := map[string][]int{} // the entries of each namespace, newest last
	for i, pod := range from {
		byNS[pod.Namespace] = append(byNS[pod.Namespace], i)
	}
	for _, idx := range byNS {
		slices.SortFunc(idx, func(a, b int) int {
			pa, pb := from[a], from[b]
			return cmp.Or(pa.CreationTimestamp.Compare(pb.CreationTimestamp.Time), cmp.Compare(pa.Name, pb.Name), cmp.Compare(pa.UID, pb.UID))
		})
	}
	namespaces := slices.Sorted(maps.Keys(byNS))
	drop := make([]bool, len(out))
	for n := len(out); n > limit; n-- {
		most := namespaces[0]
		for _, ns := range namespaces[1:] {
			if len(byNS[ns]) > len(byNS[most]) {
				most = ns
			}
		}
		idx := byNS[most]
		drop[idx[len(idx)-1]] = true
		byNS[most] = idx[:len(idx)-1]
	}
	kept = make([]appsv1alpha1.PodProbe, 0, limit)
	for i := range out {
		if drop[i] {
			dropped = append(dropped, from[i])
			continue
		}
		kept = append(kept, out[i])
	}
	return kept, dropped
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
