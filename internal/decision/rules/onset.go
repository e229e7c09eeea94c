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

package rules

import "time"

// A storm is a correlated onset: pods that start failing together point at a shared cause, while
// a pod that has been failing for long (held, blacklisted, dry-run, its restarts ineffective) is
// another story. Without this, old failures would keep a storm alive for ever and hold every new
// hang of the workload or node behind them.

// StormCorrelation is how far apart two pods' failures may have begun and still count toward one
// storm: a fleet-wide failure starts on every pod within a few probe periods.
const StormCorrelation = 5 * time.Minute

// Correlated reports whether a pod whose failures were first seen at seen counts toward the storm
// of a pod whose failures were first seen at onset: they began at most StormCorrelation apart,
// either way (a sibling that started failing after the decided pod is part of an ongoing storm).
// Both are on the manager's clock; a zero time is unknown and counts, the safe side.
func Correlated(seen, onset time.Time) bool {
	if seen.IsZero() || onset.IsZero() {
		return true
	}
	d := seen.Sub(onset)
	return -StormCorrelation <= d && d <= StormCorrelation
}

// correlated reports whether the workload's pod p counts toward the storm of the decided pod.
func (w WorkloadState) correlated(p PodState) bool { return Correlated(p.Onset, w.Onset) }
