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

// Package policystatus writes the EnhancedLivenessPolicy status, and is its only writer.
//
// The controller watches the policies (generation changes), the decision's Inbox (policies whose
// counts moved, figures counted) and the workloads whose owners change, and writes
// observedGeneration, the Ready, StormDetected and RestartsIneffective conditions, the enrolled,
// failing and unprobed counts, the decision counters, the held pods, the per-workload summary and
// the figures of enrolling; it reads the cache through the decision's facts builder and the
// decision's memory through snapshots, and judges nothing itself. Evictions writes
// status.recentEvictions for the decision: the entry of an eviction before it is made, since the
// pod webhook steers the replacement by it, and out again when it was not tried; the controller
// only drops the expired entries.
package policystatus
