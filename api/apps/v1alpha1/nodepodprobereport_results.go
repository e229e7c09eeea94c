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

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Failed reports whether the probe's last reported state is Failed: it reached its failure
// threshold on the container named by ContainerID.
func (s *ContainerProbeState) Failed() bool { return s.State == ProbeFailed }

// Suspect reports whether the probe has started failing on its container without reaching its
// failure threshold yet: early evidence for the storm rules.
func (s *ContainerProbeState) Suspect() bool { return !s.Failed() && s.FailingSince != nil }

// Passing reports whether the probe passed its last probe and has no run of failures: the
// report omits such states.
func (s *ContainerProbeState) Passing() bool {
	return s.State == ProbeSucceeded && s.FailingSince == nil
}

// CompleteFor reports whether the results are complete for the NodePodProbe spec of the given
// generation (its metadata.generation): a probe of that spec they do not list passed its last
// probe. Otherwise (the daemon has not written for that spec yet) a probe they do not list may
// not have been probed yet.
func (r *ProbeResults) CompleteFor(generation int64) bool {
	return r.ProbedGeneration > 0 && r.ProbedGeneration == generation
}

// Written reports whether a daemon has written the report: it sets probedGeneration on every
// write, and the manager creates the report without it.
func (r *NodePodProbeReport) Written() bool {
	return r != nil && r.Status.ProbedGeneration > 0
}

// Pod returns the listed results of the pod with the given UID, nil when none is listed.
func (r *ProbeResults) Pod(uid types.UID) *PodProbeStatus {
	for i := range r.PodProbeStatuses {
		if r.PodProbeStatuses[i].UID == uid {
			return &r.PodProbeStatuses[i]
		}
	}
	return nil
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
