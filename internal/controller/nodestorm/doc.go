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

// Package nodestorm keeps the Nodes' EnhancedLivenessNodeStorm condition (the judgement is
// internal/decision/nodecondition's).
//
// A leader-only runnable reads, every interval, the restarts the decision's memory holds NodeStorm
// or RestartIneffective and how their workloads fare on other nodes (through the decision's facts
// builder), and patches that one condition into the Nodes' status, with events on the Node, so
// that node remediation can act on a node where several tenants' pods fail while their workloads
// pass elsewhere. It sets what it set True back to False when it stops: a condition nobody judges
// must not outlive the manager. Its gauges count the nodes with the condition and those the cap
// withholds it from.
//
// Stop is `manager stop`, which an uninstall runs first (the Helm chart's pre-delete hook): it
// stops the manager while its permissions still stand, then sets False what is still True.
package nodestorm
