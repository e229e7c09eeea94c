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

package main

import (
	"cmp"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// rbacIndex resolves which rules each ServiceAccount is granted through the manifests' bindings.
type rbacIndex struct {
	roles        map[string]*unstructured.Unstructured // "Role/name" or "ClusterRole/name"
	bindings     []*unstructured.Unstructured
	usedRoles    map[string]bool
	usedBindings map[string]bool
}

func newRBACIndex() *rbacIndex {
	return &rbacIndex{
		roles:     map[string]*unstructured.Unstructured{},
		usedRoles: map[string]bool{}, usedBindings: map[string]bool{},
	}
}

func (r *rbacIndex) add(u *unstructured.Unstructured) {
	switch u.GetKind() {
	case kindRole, kindClusterRole:
		r.roles[u.GetKind()+"/"+u.GetName()] = u
	default:
		r.bindings = append(r.bindings, u)
	}
}

// rulesOf returns the cluster-wide rules (ClusterRoleBindings) and the namespaced rules
// (RoleBindings, to a Role or a ClusterRole) of ServiceAccount sa, in binding-name order.
func (r *rbacIndex) rulesOf(sa string) (cluster, namespaced []rbacv1.PolicyRule) {
	sorted := append([]*unstructured.Unstructured(nil), r.bindings...)
	slices.SortStableFunc(sorted, func(a, b *unstructured.Unstructured) int {
		return cmp.Compare(a.GetName(), b.GetName())
	})
	for _, u := range sorted {
		var subjects []rbacv1.Subject
		var ref rbacv1.RoleRef
		if u.GetKind() == kindClusterRoleBinding {
			b := &rbacv1.ClusterRoleBinding{}
			if fromUnstructured(u, b) != nil {
				continue
			}
			subjects, ref = b.Subjects, b.RoleRef
		} else {
			b := &rbacv1.RoleBinding{}
			if fromUnstructured(u, b) != nil {
				continue
			}
			subjects, ref = b.Subjects, b.RoleRef
		}
		if !hasServiceAccount(subjects, sa) {
			continue
		}
		key := ref.Kind + "/" + ref.Name
		role, ok := r.roles[key]
		if !ok {
			continue
		}
		rules := rulesOfRole(role)
		r.usedRoles[key] = true
		r.usedBindings[u.GetKind()+"/"+u.GetName()] = true
		if u.GetKind() == kindClusterRoleBinding {
			cluster = append(cluster, rules...)
		} else {
			namespaced = append(namespaced, rules...)
		}
	}
	return cluster, namespaced
}

// leftover returns roles and bindings that grant nothing to a bundle ServiceAccount (candidates
// for plain bundle manifests; installStrategy keeps only the namespaced ones) and reports the
// consumed ones.
func (r *rbacIndex) leftover() (keep []*unstructured.Unstructured, consumed []string) {
	place := func(key string, used bool, u *unstructured.Unstructured) {
		if used {
			consumed = append(consumed, key+": became CSV permissions")
			return
		}
		c := u.DeepCopy()
		c.SetNamespace("")
		keep = append(keep, c)
	}
	for key, u := range r.roles {
		place(key, r.usedRoles[key], u)
	}
	for _, u := range r.bindings {
		key := u.GetKind() + "/" + u.GetName()
		place(key, r.usedBindings[key], u)
	}
	slices.SortStableFunc(keep, byFileName)
	return keep, consumed
}

func hasServiceAccount(subjects []rbacv1.Subject, sa string) bool {
	for _, s := range subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa {
			return true
		}
	}
	return false
}

func rulesOfRole(u *unstructured.Unstructured) []rbacv1.PolicyRule {
	cr := &rbacv1.ClusterRole{}
	if err := fromUnstructured(u, cr); err != nil {
		return nil
	}
	return cr.Rules
}
