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

// Package results holds the node's probe results: the last reported state of each liveness
// probe, keyed by pod UID, container and probe name (Key), with when its current run of failures
// began. The probe workers (internal/daemon/prober) write it; the report writer
// (internal/daemon/report) reads it and waits on its signals: Changed for any reportable change,
// NewFailure for a probe that became Failed, which the writer sends sooner. It sits apart from
// both, as the kubelet's results manager does, so that neither knows the other: a worker does not
// know how its results are reported, and the writer does not know how they are probed. Each
// change says how soon it should be written (Write): the worker decides, where it records it.
package results
