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

// Package restart is the decision controller: for every fresh Failed liveness result of an
// enrolled pod it decides, by the rules and the memory, whether to restart the container, evict
// the pod, or hold the restart, and carries the decision out.
//
// It watches Pods, NodePodProbes, NodePodProbeReports, ContainerRecreateRequests, the daemons'
// Leases, EnhancedLivenessPolicies and the workloads (Deployments, StatefulSets, ReplicaSets),
// each of which may change a decision or wake a held one. It writes ContainerRecreateRequests
// (a restart) and Evictions (restartEffectiveness.action Evict), and the pod's events
// (RestartRequested, RestartHeld, RestartStillHeld, Evicted, EvictionRefused). What else a
// decision changes is written by its owner, called through a small interface: the canary's
// RestartHold before its restart (Holds, internal/controller/restarthold), the eviction's entry in
// status.recentEvictions before the eviction (EvictionRecords, internal/controller/policystatus),
// the figures of enrolling (Figures). Its metrics count the decisions, the evictions, the figures
// and the holds held now (the hold gauges, set from the memory, which it also sweeps).
package restart
