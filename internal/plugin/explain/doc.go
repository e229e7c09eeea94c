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

// Package explain says, for one pod, what the operator does with its liveness probes and why: the
// mode it was admitted in, the probes as the node daemon runs them, their last results, the
// decision on a failure with the rule that made it, the hold and what ends it, what the kubelet
// did or would have done, and the restart requests and evictions with their outcome.
//
// It is pure: Build reads only the objects it is given (what a user who can read the pod's
// namespace can read, plus the node's report when it is readable), so the kubectl plugin and its
// tests share one reading of them.
package explain
