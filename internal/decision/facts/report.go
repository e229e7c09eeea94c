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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// nodeReport is what one node says of its pods: which pods its NodePodProbe names (those are
// probed) and the results of its NodePodProbeReport, which list only what is not passing.
// Both maps are empty when the node has no NodePodProbe (then nothing is probed there).
type nodeReport struct {
	states map[types.UID]*appsv1alpha1.PodProbeStatus
	named  map[types.UID]bool
	// omitsPassing: the results are complete for the current spec, so a probe of a named pod
	// they do not list passed its last probe.
	omitsPassing bool
	// written: a daemon has written the report (appsv1alpha1.NodePodProbeReport.Written).
	written bool
	// reporting: the node's daemon renews its Lease. While it does not, nothing the report says
	// is passing: a probe nobody runs any more would read as healthy, omitted or listed.
	reporting bool
	// omitted are the namespaces whose results the report cuts to some of their Failed states
	// (over its byte budget).
	omitted map[string]bool
	// decoded gives each named pod's probes (nil: decoded on every read).
	decoded *podProbes
}

// newNodeReport indexes the spec of npp and the results of rep (nil: none yet); reporting says
// whether the node's daemon renews its Lease.
func newNodeReport(npp *appsv1alpha1.NodePodProbe, rep *appsv1alpha1.NodePodProbeReport, reporting bool) nodeReport {
	if npp == nil {
		return nodeReport{}
	}
	r := nodeReport{named: make(map[types.UID]bool, len(npp.Spec.PodProbes))}
	for i := range npp.Spec.PodProbes {
		r.named[npp.Spec.PodProbes[i].UID] = true
	}
	if rep == nil {
		return r
	}
	results := &rep.Status
	r.written, r.reporting = rep.Written(), reporting
	r.omitsPassing = results.CompleteFor(npp.Generation)
	r.omitted = make(map[string]bool, len(results.OmittedNamespaces))
	for _, ns := range results.OmittedNamespaces {
		r.omitted[ns] = true
	}
	r.states = make(map[types.UID]*appsv1alpha1.PodProbeStatus, len(results.PodProbeStatuses))
	for i := range results.PodProbeStatuses {
		r.states[results.PodProbeStatuses[i].UID] = &results.PodProbeStatuses[i]
	}
	return r
}

// podReport is what the node's report says of one pod: the probes the daemon runs for it (none
// when the NodePodProbe does not name it), its listed states, whether the report is complete
// for the spec (then a probe it does not list passed), and whether anything in it may be read as
// passing.
type podReport struct {
	probes   []probecontext.Probe
	status   *appsv1alpha1.PodProbeStatus
	complete bool
	// readsPassing: the node's daemon is reporting and probes the pod. Otherwise no probe of the
	// pod passes, whatever the report lists or omits.
	readsPassing bool
	// notProbed says why the report gives no result for any probe of the pod (Unprobed's
	// message), reason is the Unprobed reason: every probe of the pod is not probed, none passing
	// nor failed.
	notProbed, reason string
	// omitted says why the report lists only some of the pod's Failed states (its namespace is
	// in omittedNamespaces): those are failures; its other probes are not probed, never passing.
	omitted string
}

// pod returns what the report says of pod. Its probes are those the daemon derives from the pod
// (probecontext.PodProbes, decoded once per pod: podProbes), from the same sealed probe context:
// the manager names only sealed pods, so the context decodes.
func (r nodeReport) pod(pod *corev1.Pod) podReport {
	rep := podReport{status: r.states[pod.UID], complete: r.omitsPassing, readsPassing: r.reporting}
	if r.named[pod.UID] {
		rep.probes = r.decoded.of(pod)
	}
	node := pod.Spec.NodeName
	switch {
	case rep.status != nil && rep.status.NotProbed != "":
		rep.reason = UnprobedRefused
		rep.notProbed = fmt.Sprintf("the daemon of node %s probes none of the pod's probes: %s", node, rep.status.NotProbed)
	case r.omitted[pod.Namespace]:
		// The daemon keeps the namespace's Failed states that fit its share of the budget: they
		// are still restarted; nothing else of it may be read as passing.
		rep.readsPassing = false
		rep.omitted = fmt.Sprintf("the NodePodProbeReport of node %s leaves out the results of namespace %s "+
			"but the Failed probes that fit its share, to stay within its byte budget", node, pod.Namespace)
	}
	if rep.notProbed != "" {
		rep.status, rep.readsPassing = nil, false
	}
	return rep
}

// passed reports whether the report says a probe of the pod passed its last run: listed
// passing, or left out of a report complete for the spec, while anything in it reads as passing.
func (p podReport) passed(probe string) bool {
	if !p.readsPassing {
		return false
	}
	if s := stateOf(p.status, probe); s != nil {
		return s.Passing()
	}
	return p.complete
}

// anyPassed reports whether some probe of the pod passed its last run (passed).
func (p podReport) anyPassed() bool {
	for i := range p.probes {
		if p.passed(p.probes[i].Name) {
			return true
		}
	}
	return false
}

// stateOf returns the listed state of one probe of the pod (nil if it is not listed).
func stateOf(ps *appsv1alpha1.PodProbeStatus, probe string) *appsv1alpha1.ContainerProbeState {
	if ps == nil {
		return nil
	}
	for i := range ps.ProbeStates {
		if ps.ProbeStates[i].Name == probe {
			return &ps.ProbeStates[i]
		}
	}
	return nil
}
