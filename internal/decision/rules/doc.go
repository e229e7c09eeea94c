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

// Package rules is the restart decision as pure functions: Decide applies the rules of
// docs/policy.md ("The decision, in order") to one failed liveness result, from what was read of
// the cluster (Facts, built by internal/decision/facts) and what the decision remembers
// (Memory, a read-only view of internal/decision/memory). Each rule has one file, in the order
// of the decision: fresh.go, switches.go, blacklist.go, active.go, storms.go,
// effectiveness.go, budget.go, ratelimit.go. The policies that govern a pod and how they
// combine are in policy.go. Nothing here reads the API server or a clock.
package rules
