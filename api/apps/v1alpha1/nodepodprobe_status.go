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

package v1alpha1

import "time"

// Failed reports whether the probe's last reported state is Failed: it reached its failure
// threshold on the container named by ContainerID.
func (s *ContainerProbeState) Failed() bool { return s.State == ProbeFailed }

// Suspect reports whether the probe has started failing on its container without reaching its
// failure threshold yet: early evidence for the storm rules.
func (s *ContainerProbeState) Suspect() bool { return !s.Failed() && s.FailingSince != nil }

// Passing reports whether the probe passed its last probe and has no run of failures: a status
// with probedGeneration omits such states.
func (s *ContainerProbeState) Passing() bool {
	return s.State == ProbeSucceeded && s.FailingSince == nil
}

// OmitsPassing reports whether the status is complete for the current spec (probedGeneration is
// metadata.generation): a probe of the spec that podProbeStatuses does not list passed its last
// probe. Otherwise (a daemon that lists every result, or a spec changed since the daemon's last
// write) a probe missing from the status may not have been probed yet.
func (npp *NodePodProbe) OmitsPassing() bool {
	return npp.Status.CompleteFor(npp.Generation)
}

// CompleteFor reports whether the results are complete for the NodePodProbe spec of the given
// generation: a probe of that spec they do not list passed its last probe.
func (r *ProbeResults) CompleteFor(generation int64) bool {
	return r.ProbedGeneration > 0 && r.ProbedGeneration == generation
}

// Empty reports whether there are no results at all (a daemon that writes a report leaves the
// NodePodProbe's status so).
func (r *ProbeResults) Empty() bool {
	return r.ObservedGeneration == 0 && r.ProbedGeneration == 0 && r.ProbedPods == 0 && r.FailingProbes == 0 &&
		len(r.PodProbeStatuses) == 0
}

// Written reports whether a daemon has written the report: it sets probedGeneration on every
// write, and the manager creates the report without it.
func (r *NodePodProbeReport) Written() bool {
	return r != nil && r.Status.ProbedGeneration > 0
}

// WithReport returns npp with the results of its node's report in place of its own status
// results, once a daemon has written the report; otherwise npp itself, whose status holds what a
// daemon from before the report wrote (an upgrade in progress). The copy shares npp's spec and
// conditions: both are only read.
func (npp *NodePodProbe) WithReport(r *NodePodProbeReport) *NodePodProbe {
	if npp == nil || !r.Written() {
		return npp
	}
	view := *npp
	view.Status.ProbeResults = r.Status
	return &view
}

// FailedProbes counts the pod's probes whose last reported state is Failed.
func (s *PodProbeStatus) FailedProbes() int {
	n := 0
	for i := range s.ProbeStates {
		if s.ProbeStates[i].Failed() {
			n++
		}
	}
	return n
}

// A Failed result is evidence for a restart only while it is fresh. The node daemon writes the
// lastProbeTime of a Failed state again whenever it is older than FailedRefreshInterval, and the
// decision controller trusts a Failed state only if it was taken after the daemon's current start
// (its Lease's acquireTime) and within FailedStaleAfter of the daemon's last heartbeat (its
// Lease's renewTime). Both times are the node's clock.

// ProbeInterval is how often a probe's result is taken, in seconds: every period, or, when one
// run may take longer than a period (timeoutSeconds > periodSeconds), as often as its runs end.
// A hanging probe that times out each run is refreshed no faster than that.
func ProbeInterval(periodSeconds, timeoutSeconds int32) int32 {
	return max(periodSeconds, timeoutSeconds)
}

// FailedRefreshInterval is twice the probe interval (ProbeInterval), at least 10 seconds.
func FailedRefreshInterval(intervalSeconds int32) time.Duration {
	return max(2*time.Duration(intervalSeconds)*time.Second, 10*time.Second)
}

// FailedStaleAfter leaves room for two missed refreshes and two heartbeats.
func FailedStaleAfter(intervalSeconds int32) time.Duration {
	return 2*FailedRefreshInterval(intervalSeconds) + 2*DaemonLeaseRenewSeconds*time.Second
}
