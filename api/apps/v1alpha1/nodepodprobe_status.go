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

// Failed reports whether the probe's last reported state is Failed: it reached its failure
// threshold on the container named by ContainerID.
func (s *ContainerProbeState) Failed() bool { return s.State == ProbeFailed }

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
