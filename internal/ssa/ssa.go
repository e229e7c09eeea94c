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

// Package ssa holds what the manager's keepers share, the code that keeps objects the manager owns
// in their desired state: the one field owner of their writes, the manager's Deployment as the
// objects' owner, and for the controllers that apply their objects server-side (the daemon
// DaemonSet, internal/controller/daemonset, and the ValidatingAdmissionPolicies,
// internal/controller/admissionpolicy) the apply itself and the controller's shape (Keep): one
// request, reconciled at start and after every change of a kept object. The monitoring keeper
// (internal/controller/monitoring) writes kinds that may not be served, so it is a runnable of its
// own; the webhook certificates' rotator (internal/manager/certs) writes as FieldOwner too.
package ssa

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Object turns a typed object into an apply patch without the zero-valued fields the typed
// structs always serialize (status, creation timestamps), which would otherwise become fields
// the applier claims to own.
func Object(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	return u, nil
}

// Changed passes the events after which a kept object must be applied again: creation,
// deletion, and updates of its spec (generation), labels, annotations or owner references;
// status-only updates do not.
func Changed() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
		predicate.AnnotationChangedPredicate{}, ownerRefsChanged{})
}

// ownerRefsChanged passes updates that change owner references (someone orphaning the object).
type ownerRefsChanged struct{ predicate.Funcs }

func (ownerRefsChanged) Update(e event.UpdateEvent) bool {
	if e.ObjectOld == nil || e.ObjectNew == nil {
		return false
	}
	return fmt.Sprint(e.ObjectOld.GetOwnerReferences()) != fmt.Sprint(e.ObjectNew.GetOwnerReferences())
}
