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

package report

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// Plan is what the daemon makes of its node's NodePodProbe (wiring's SpecReconciler): the spec's
// generation and, for each pod the spec names, in spec order, the probes the daemon derived from
// the pod. Probes it does not run are in it too (their pod's seal does not verify, ...): the
// report lists them as not probed.
type Plan struct {
	Generation int64
	Pods       []PlannedPod
}

// PlannedPod is one pod of a Plan.
type PlannedPod struct {
	Name, Namespace string
	UID             types.UID
	Probes          []PlannedProbe
	// NotProbed says why the daemon runs none of the pod's probes when it cannot name them
	// (it has no such pod, its probe context does not decode): Probes is then empty, and the
	// report lists the pod as not probed.
	NotProbed string
}

// PlannedProbe is one probe of a PlannedPod: its key in the results, and what the writer needs
// to know of it besides its result.
type PlannedProbe struct {
	results.Key
	// IntervalSeconds is the probe's interval once defaulted (appsv1alpha1.ProbeInterval): a
	// Failed result is written again when it is older than FailedRefreshInterval of it.
	IntervalSeconds int32
	// NotRun, when set, says why the daemon does not run this probe (its trust gate holds it
	// back): the report lists it NotProbed.
	NotRun string
}

// BuildStatus computes the report of the plan from the cache and the results the report shows.
// It lists only what a decision needs: the probes of the plan that are failing, suspect (a run of
// failures below the threshold), not probed yet (state Unknown) or held back by the trust gate
// (NotProbed, PlannedProbe.NotRun: always listed, whatever result an earlier worker left), and the pods
// whose probes it cannot name at all (PlannedPod.NotProbed), and sets probedGeneration to
// the plan's spec generation, which says that every other probe of that spec passed its last probe. A
// write then costs the API server what is wrong on the node, not how many pods it runs. A probe
// without a result in the cache (its worker has not run since the daemon started, or it stopped
// for a terminating pod) keeps what the report shows: its listed state, or passing when the
// report omitted it for this very spec; otherwise it is reported not probed yet. So a daemon
// restart does not wipe the node's report. Pods and probes that left the spec disappear.
func BuildStatus(plan *Plan, shown *appsv1alpha1.ProbeResults, cache *results.Cache) appsv1alpha1.ProbeResults {
	st := appsv1alpha1.ProbeResults{ObservedGeneration: plan.Generation, ProbedGeneration: plan.Generation}
	type probeRef struct {
		uid  types.UID
		name string
	}
	listed := map[probeRef]*appsv1alpha1.ContainerProbeState{}
	for i := range shown.PodProbeStatuses {
		ps := &shown.PodProbeStatuses[i]
		for j := range ps.ProbeStates {
			listed[probeRef{ps.UID, ps.ProbeStates[j].Name}] = &ps.ProbeStates[j]
		}
	}
	complete := shown.CompleteFor(plan.Generation)
	for i := range plan.Pods {
		pp := &plan.Pods[i]
		// A pod of a namespace the report left out (fitBudget) did not pass for being left out.
		omittedPassing := complete && !slices.Contains(shown.OmittedNamespaces, pp.Namespace)
		if pp.NotProbed != "" {
			// Never omitted: an omitted pod of a complete report reads as passing.
			st.PodProbeStatuses = append(st.PodProbeStatuses, appsv1alpha1.PodProbeStatus{Name: pp.Name, Namespace: pp.Namespace,
				UID: pp.UID, NotProbed: truncate.String(pp.NotProbed, appsv1alpha1.MaxPodNotProbedLength)})
			continue
		}
		var states []appsv1alpha1.ContainerProbeState
		probed := false
		for j := range pp.Probes {
			p := &pp.Probes[j].Key
			if why := pp.Probes[j].NotRun; why != "" {
				// Never omitted: an omitted probe reads as passing, and nothing runs this one.
				states = append(states, appsv1alpha1.ContainerProbeState{Name: p.Probe, State: appsv1alpha1.ProbeNotProbed,
					Message: truncate.String(why, results.MaxMessageBytes)})
				continue
			}
			var state appsv1alpha1.ContainerProbeState
			if e, ok := cache.Get(*p); ok {
				state = appsv1alpha1.ContainerProbeState{
					Name: p.Probe, ContainerID: e.ContainerID, State: e.State, Message: e.Message,
					LastProbeTime: metav1.NewTime(e.LastProbeTime), LastTransitionTime: metav1.NewTime(e.LastTransitionTime),
				}
				if !e.FailingSince.IsZero() {
					state.FailingSince = &metav1.Time{Time: e.FailingSince}
				}
			} else if old := listed[probeRef{pp.UID, p.Probe}]; old != nil {
				state = *old
			} else if omittedPassing {
				probed = true
				continue
			} else {
				states = append(states, appsv1alpha1.ContainerProbeState{Name: p.Probe, State: appsv1alpha1.ProbeUnknown})
				continue
			}
			probed = probed || state.State != appsv1alpha1.ProbeUnknown
			if state.Failed() {
				st.FailingProbes++
			}
			if !state.Passing() {
				states = append(states, state)
			}
		}
		if probed {
			st.ProbedPods++
		}
		if len(states) > 0 {
			st.PodProbeStatuses = append(st.PodProbeStatuses, appsv1alpha1.PodProbeStatus{
				Name: pp.Name, Namespace: pp.Namespace, UID: pp.UID, ProbeStates: states,
			})
		}
	}
	return st
}

// sameReport compares what a write would change, ignoring lastProbeTime (which moves on every
// run and alone never justifies a write) and sub-second time precision lost in the API.
func sameReport(a, b *appsv1alpha1.ProbeResults) bool {
	if a.ObservedGeneration != b.ObservedGeneration || a.ProbedGeneration != b.ProbedGeneration || a.ProbedPods != b.ProbedPods ||
		a.FailingProbes != b.FailingProbes || len(a.PodProbeStatuses) != len(b.PodProbeStatuses) ||
		!slices.Equal(a.OmittedNamespaces, b.OmittedNamespaces) {
		return false
	}
	for i := range a.PodProbeStatuses {
		pa, pb := &a.PodProbeStatuses[i], &b.PodProbeStatuses[i]
		if pa.UID != pb.UID || pa.Name != pb.Name || pa.Namespace != pb.Namespace || pa.NotProbed != pb.NotProbed ||
			len(pa.ProbeStates) != len(pb.ProbeStates) {
			return false
		}
		for j := range pa.ProbeStates {
			sa, sb := &pa.ProbeStates[j], &pb.ProbeStates[j]
			if sa.Name != sb.Name || sa.ContainerID != sb.ContainerID || sa.State != sb.State || sa.Message != sb.Message ||
				!sa.LastTransitionTime.Truncate(time.Second).Equal(sb.LastTransitionTime.Truncate(time.Second)) ||
				(sa.FailingSince == nil) != (sb.FailingSince == nil) {
				return false
			}
		}
	}
	return true
}

// refreshDue reports whether a Failed state of desired is newer than the one the report shows by
// at least its probe's FailedRefreshInterval: a result that stays Failed is written again, so that
// the decision controller can tell it from one a stopped daemon left behind.
func refreshDue(plan *Plan, shown, desired *appsv1alpha1.ProbeResults) bool {
	type ref struct {
		uid   types.UID
		probe string
	}
	period := map[ref]int32{}
	for i := range plan.Pods {
		for j := range plan.Pods[i].Probes {
			t := &plan.Pods[i].Probes[j]
			period[ref{t.PodUID, t.Probe}] = t.IntervalSeconds
		}
	}
	listed := map[ref]*appsv1alpha1.ContainerProbeState{}
	for i := range shown.PodProbeStatuses {
		ps := &shown.PodProbeStatuses[i]
		for j := range ps.ProbeStates {
			listed[ref{ps.UID, ps.ProbeStates[j].Name}] = &ps.ProbeStates[j]
		}
	}
	for i := range desired.PodProbeStatuses {
		ps := &desired.PodProbeStatuses[i]
		for j := range ps.ProbeStates {
			st := &ps.ProbeStates[j]
			old := listed[ref{ps.UID, st.Name}]
			if !st.Failed() || old == nil {
				continue
			}
			if st.LastProbeTime.Sub(old.LastProbeTime.Time) >= appsv1alpha1.FailedRefreshInterval(period[ref{ps.UID, st.Name}]) {
				return true
			}
		}
	}
	return false
}
