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

package probecontext

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// Probe is one liveness probe the operator runs for a pod.
type Probe struct {
	// Name is "<pod>-<container>" (ProbeName): the name of its state in the NodePodProbeReport.
	Name      string
	Container string
	// Probe has its named ports resolved and its defaults explicit (Resolve).
	Probe *corev1.Probe
}

// Problem is an entry of a probe context that gives the pod no probe, and why.
type Problem struct {
	Container, Message string
}

// ProbesOf returns the probes pctx gives pod: one per entry whose container the operator probes
// (a container the kubelet starts again after a CRI stop: podutil.RestartedAfterStop), in the
// context's order. Each other entry is a Problem. The mapping controller, the node daemon and the
// decision all read a pod's probes from here, so they agree on them.
func ProbesOf(pod *corev1.Pod, pctx Context) ([]Probe, []Problem) {
	var probes []Probe
	var problems []Problem
	for _, e := range pctx.Entries {
		pc, ok := podutil.FindRestartable(&pod.Spec, e.Name)
		if !ok {
			problems = append(problems, Problem{e.Name, fmt.Sprintf("probe context names container %q, which the pod does not have", e.Name)})
			continue
		}
		if !podutil.RestartedAfterStop(&pod.Spec, pc) {
			// Enrolled by an earlier version: a restart through a CRI stop would leave it stopped.
			problems = append(problems, Problem{e.Name, fmt.Sprintf("container %q has restart policy %s: the kubelet would not "+
				"start it again after the operator stopped it (re-create the pod to give it back its native livenessProbe)",
				e.Name, podutil.EffectiveRestartPolicy(&pod.Spec, pc.Container))})
			continue
		}
		resolved, err := Resolve(e.LivenessProbe, pc.Container)
		if err != nil {
			problems = append(problems, Problem{e.Name, err.Error()})
			continue
		}
		probes = append(probes, Probe{Name: ProbeName(pod.Name, e.Name), Container: e.Name, Probe: resolved})
	}
	return probes, problems
}

// PodProbes decodes the pod's probe context and returns its probes (ProbesOf). The caller
// trusts the annotation: the node daemon verifies the pod's seal first, the manager maps only
// sealed pods.
func PodProbes(pod *corev1.Pod) ([]Probe, []Problem, error) {
	pctx, errs := FromAnnotations(pod.Annotations)
	if len(errs) > 0 {
		return nil, nil, errs.ToAggregate()
	}
	probes, problems := ProbesOf(pod, pctx)
	return probes, problems, nil
}
