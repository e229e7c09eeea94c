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

// Package decision wires the manager's decision: it builds the facts builder
// (internal/decision/facts) and the decision's memory (internal/decision/memory) once, and
// registers the controllers that share them, one package per object they write:
//
//   - restart: the decision itself, Pod failures into ContainerRecreateRequests or evictions;
//   - restarthold: the RestartHold records of the memory's holds;
//   - policystatus: EnhancedLivenessPolicy status, every write of it;
//   - nodestorm: the Nodes' EnhancedLivenessNodeStorm condition;
//   - unprobed: the LivenessNotProbed events on pods no daemon probes.
//
// Config is what the manager's flags set; SetupWithManager is the one call cmd makes.
package decision
