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

// Package prober runs the node's liveness probes: one worker per (pod UID, container, probe),
// with the kubelet's worker semantics (docs/probe-semantics.md #6-#15). Manager starts, updates
// and stops the workers as the daemon's NodePodProbe controller (internal/daemon/wiring) hands it
// the probes to run and the node's pods (Sync). A worker's run is gated on the pod's state
// (gate.go), run by the runner of the probe's kind (package check), and folded into a small run
// state (runstate.go, pure transitions); what that changes goes to the pod's events, the probe
// metrics and the node's results (internal/daemon/results), each write saying how soon it should
// be reported. It does not report: the report writer (internal/daemon/report) reads the results,
// as the kubelet keeps its workers, results and status manager apart.
package prober
