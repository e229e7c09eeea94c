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

// Package nodepodprobe is the manager's probe mapping: it keeps one NodePodProbe per node, whose
// spec names the enrolled pods bound to the node whose liveness probes that node's daemon runs.
// It watches NodePodProbes, NodePodProbeReports, pods and node creation and deletion, all batched
// per node (DefaultMappingBatchDelay), so many pod events make one write of a node's spec. It
// writes the spec and the Mapped condition (a spec the API server refuses is reported there and
// in events, refused.go), and creates each node's empty NodePodProbeReport, whose status the
// node's daemon alone writes (report.go). Only pods whose probe context is sealed are mapped
// (desired.go): the daemon runs nothing else. cmd/setup.go wires it (Reconciler);
// docs/probe-mapping.md says what it guarantees.
package nodepodprobe
