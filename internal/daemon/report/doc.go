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

// Package report writes the node's probe results into the status of its NodePodProbeReport,
// the one home of the node's results and their only writer; the manager's decision reads them
// there. The daemon's NodePodProbe controller (internal/daemon/wiring) hands the Writer a Plan
// (which probes the spec names, and those the trust gate holds back); the Writer reads the
// results (internal/daemon/results) that the probe workers (internal/daemon/prober) record, and
// waits on their signals. It writes few, coalesced, conflict-safe patches (writer.go): a change
// after a quiet window at once, a new failure within FailureWindow since the decision waits for
// it, everything else gathered for Window; a Failed result again before it looks stale. What it
// writes lists only what a decision needs (status.go), within a byte budget that cuts the
// namespaces over their fair share to their Failed states (budget.go), and the writes that
// report new failures are timed where they are sent (failures.go). It is apart from the workers
// as the kubelet's status manager is from its probe workers: the workers never wait on the API.
package report
