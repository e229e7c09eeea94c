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

package rules

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// WorkloadRef names the workload a pod belongs to, in the pod's namespace: its top controller
// owner, or the pod itself when it has none.
type WorkloadRef struct {
	APIVersion string
	Kind       string
	Name       string
	UID        types.UID
}

// String is kind/name, used in events and logs.
func (w WorkloadRef) String() string { return w.Kind + "/" + w.Name }

// Key identifies the workload in the decision's memory.
func (w WorkloadRef) Key(namespace string) WorkloadKey {
	gv, _ := schema.ParseGroupVersion(w.APIVersion)
	return WorkloadKey{Namespace: namespace, Group: gv.Group, Kind: w.Kind, Name: w.Name}
}

// WorkloadKey identifies a workload across reconciles: the API group and kind (not the version,
// which may differ between references to the same object), namespace and name.
type WorkloadKey struct {
	Namespace, Group, Kind, Name string
}

// String is namespace/kind/name, for logs.
func (k WorkloadKey) String() string { return k.Namespace + "/" + k.Kind + "/" + k.Name }
