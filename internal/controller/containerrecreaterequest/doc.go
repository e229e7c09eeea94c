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

// Package containerrecreaterequest is the manager's side of a ContainerRecreateRequest's life.
// The decision creates a request; the node daemon (internal/daemon/recreate) runs it and records
// its progress and the outcome of the restart. This controller alone fails the requests that
// cannot finish (pod gone, replaced or terminating, no daemon picked them up, deadline passed,
// a stop still in flight long past it), with a Warning event, and deletes finished requests
// after their TTL. It watches requests and the end of enrolled pods, and writes only a request's
// status and its deletion, so each outcome has one writer. cmd/setup.go wires it (Reconciler).
package containerrecreaterequest
