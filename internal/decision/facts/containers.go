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

	corev1 "k8s.io/api/core/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// containerStates reads what each probed container of a pod says (rules.ContainerState): its
// probe's state in the node's results, when the manager first saw it failing, and the instance it
// runs now. The rules judge storms, restarts that do not help and canaries per container, so a
// sidecar's failures are never evidence about the app container beside it.
func (r *Reader) containerStates(ctx context.Context, p *corev1.Pod) ([]rules.ContainerState, error) {
	node := p.Spec.NodeName
	if node == "" {
		return nil, nil
	}
	rep, err := r.probeReport(ctx, p)
	if err != nil || len(rep.probes) == 0 {
		return nil, err
	}
	status := rep.status
	out := make([]rules.ContainerState, 0, len(rep.probes))
	for i := range rep.probes {
		probe := &rep.probes[i]
		cs := rules.ContainerState{Name: probe.Container}
		cs.Running, _ = podutil.RunningContainerID(p, probe.Container)
		s := stateOf(status, probe.Name)
		switch {
		case s == nil || s.Passing():
			// Left out of a complete report, or listed passing: it passed, if the daemon reports.
			cs.Healthy = rep.passed(probe.Name)
		case s.Failed():
			cs.Failing = true
		case s.Suspect():
			d, err := r.daemon(ctx, node)
			if err != nil {
				return nil, err
			}
			// A mark an earlier daemon instance left is no evidence.
			cs.Suspect = d.Started.IsZero() || !s.FailingSince.Time.Before(d.Started)
		}
		if cs.Failing || cs.Suspect {
			cs.Onset = r.onsets.of(node, p.UID, s)
		}
		out = append(out, cs)
	}
	return out, nil
}
