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

package admissionpolicy

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// The garbage collector and the namespace controller may take references and finalizers out of
// a RestartHold, and nothing else; absent and present maps count as different.
func TestRestartHoldsPolicyLetsHoldDeletersChangeOwnershipOnly(t *testing.T) {
	policy, _ := BuildRestartHolds(Config{OperatorUsername: celOperator})
	holds := schema.GroupVersionResource{Group: policyv1alpha1.GroupVersion.Group, Version: "v1alpha1", Resource: "restartholds"}
	gc, nsController := HoldDeleters[0], HoldDeleters[1]
	web := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u-web"}
	held := func() *policyv1alpha1.RestartHold {
		return &policyv1alpha1.RestartHold{
			TypeMeta: metav1.TypeMeta{APIVersion: policyv1alpha1.GroupVersion.String(), Kind: "RestartHold"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-app", OwnerReferences: []metav1.OwnerReference{web},
				Finalizers: []string{metav1.FinalizerDeleteDependents}},
			Status: policyv1alpha1.RestartHoldStatus{Container: "app", Reason: string(policyv1alpha1.HoldFailureStorm), Canaries: 2},
		}
	}
	for _, tc := range []struct {
		name   string
		user   string
		op     admission.Operation
		mutate func(h *policyv1alpha1.RestartHold)
		denied bool
	}{
		{name: "the collector removes the workload's reference", user: gc, op: admission.Update,
			mutate: func(h *policyv1alpha1.RestartHold) { h.OwnerReferences = nil }},
		{name: "the namespace controller removes the finalizer", user: nsController, op: admission.Update,
			mutate: func(h *policyv1alpha1.RestartHold) { h.Finalizers = nil }},
		{name: "the collector changes the hold", user: gc, op: admission.Update, denied: true,
			mutate: func(h *policyv1alpha1.RestartHold) { h.Status.Canaries = 3 }},
		{name: "the collector changes the hold along with the reference", user: gc, op: admission.Update, denied: true,
			mutate: func(h *policyv1alpha1.RestartHold) { h.OwnerReferences, h.Status.Reason = nil, "" }},
		{name: "the collector adds labels", user: gc, op: admission.Update, denied: true,
			mutate: func(h *policyv1alpha1.RestartHold) { h.Labels = map[string]string{"a": "b"} }},
		{name: "the collector adds annotations", user: gc, op: admission.Update, denied: true,
			mutate: func(h *policyv1alpha1.RestartHold) { h.Annotations = map[string]string{"a": "b"} }},
		{name: "a cluster admin removes the reference", user: "admin", op: admission.Update, denied: true,
			mutate: func(h *policyv1alpha1.RestartHold) { h.OwnerReferences = nil }},
		{name: "the collector creates one", user: gc, op: admission.Create, denied: true},
		{name: "the collector deletes one", user: gc, op: admission.Delete},
		{name: "the operator changes the hold", user: celOperator, op: admission.Update,
			mutate: func(h *policyv1alpha1.RestartHold) { h.Status.Canaries = 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := policyRequest{op: tc.op, resource: holds, user: tc.user}
			switch tc.op {
			case admission.Create:
				req.obj = held()
			case admission.Delete:
				req.old = held()
			default:
				obj := held()
				tc.mutate(obj)
				req.obj, req.old = runtime.Object(obj), held()
			}
			got := evaluatePolicy(t, policy, req)
			if !tc.denied {
				if len(got) > 0 {
					t.Errorf("denied: %q", got)
				}
				return
			}
			want := "RestartHolds are the enhanced-liveness manager's records of its held restarts: " + tc.user + " may not " +
				strings.ToLower(string(tc.op)) + " one"
			if len(got) != 1 || got[0] != want {
				t.Errorf("denials %q, want %q", got, want)
			}
		})
	}
}
