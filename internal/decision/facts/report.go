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
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// nodeReport indexes one NodePodProbe's status for the pods of its node. It reads both shapes a
// daemon writes: every result (a daemon from before status.probedGeneration; a probe it does not
// list has not been probed), and only what is not passing, complete for the current spec.
type nodeReport struct {
	states map[types.UID]*appsv1alpha1.PodProbeStatus
	spec   map[types.UID]*appsv1alpha1.PodProbe
	// omitsPassing: a probe of the spec the status does not list passed its last probe.
	omitsPassing bool
}

func newNodeReport(npp *appsv1alpha1.NodePodProbe) nodeReport {
	if npp == nil {
		return nodeReport{}
	}
	r := nodeReport{states: make(map[types.UID]*appsv1alpha1.PodProbeStatus, len(npp.Status.PodProbeStatuses)),
		omitsPassing: npp.OmitsPassing()}
	for i := range npp.Status.PodProbeStatuses {
		r.states[npp.Status.PodProbeStatuses[i].UID] = &npp.Status.PodProbeStatuses[i]
	}
	if r.omitsPassing {
		// Only a sparse status needs the spec: it tells which probes the status leaves out.
		r.spec = make(map[types.UID]*appsv1alpha1.PodProbe, len(npp.Spec.PodProbes))
		for i := range npp.Spec.PodProbes {
			r.spec[npp.Spec.PodProbes[i].UID] = &npp.Spec.PodProbes[i]
		}
	}
	return r
}

// podReport is what the node's status says of one pod: its listed states, and, in a sparse
// status, its probes of the spec.
type podReport struct {
	status *appsv1alpha1.PodProbeStatus
	spec   *appsv1alpha1.PodProbe
}

func (r nodeReport) pod(uid types.UID) podReport {
	return podReport{status: r.states[uid], spec: r.spec[uid]}
}

// omittedPassing reports whether a probe of the pod passed without being listed: the status is
// sparse and complete for the spec, and some probe of the pod's spec entry has no listed state.
func (p podReport) omittedPassing() bool {
	if p.spec == nil {
		return false
	}
	for i := range p.spec.Probes {
		if p.status == nil || !listed(p.status, p.spec.Probes[i].Name) {
			return true
		}
	}
	return false
}

func listed(ps *appsv1alpha1.PodProbeStatus, probe string) bool {
	for i := range ps.ProbeStates {
		if ps.ProbeStates[i].Name == probe {
			return true
		}
	}
	return false
}
