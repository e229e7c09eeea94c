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

package ssa

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// FieldOwner is the field manager of every write by which the manager keeps its own objects in
// shape: one name for all of them, so that the fields it set are its own whichever keeper set them.
const FieldOwner = "enhanced-liveness-operator"

// ManagedLabels are the labels of the objects the manager makes for the operator itself (the
// admission policies, the Prometheus objects, the signing-key Secret and the trust ConfigMap):
// app.kubernetes.io/name and app.kubernetes.io/managed-by, both the operator's name. A new map on
// each call, which the caller may add to.
func ManagedLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": FieldOwner, appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByOperator}
}

// Apply applies obj server-side as FieldOwner, taking over the fields another manager set: the
// desired state wins.
func Apply(ctx context.Context, c client.Client, obj client.Object) error {
	u, err := Object(obj)
	if err != nil {
		return err
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		name := u.GetName()
		if ns := u.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
		return fmt.Errorf("applying %s %s: %w", u.GetKind(), name, err)
	}
	return nil
}

// Keep sets up the controller called name of a keeper, r: every object of kinds that managed
// selects maps to the one request key, which is reconciled once at start (so a missing object is
// created) and again after each change Changed passes. The manager's cache must hold the managed
// objects (internal/manager/managercache).
func Keep(mgr ctrl.Manager, name string, key types.NamespacedName, managed func(client.Object) bool,
	r reconcile.Reconciler, kinds ...client.Object) error {
	toKey := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: key}}
	})
	initial := source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(reconcile.Request{NamespacedName: key})
		return nil
	})
	b := ctrl.NewControllerManagedBy(mgr).Named(name)
	for _, kind := range kinds {
		b = b.Watches(kind, toKey, builder.WithPredicates(predicate.NewPredicateFuncs(managed), Changed()))
	}
	return b.WatchesRawSource(initial).Complete(r)
}

// ManagerDeployment reads the manager's Deployment namespace/name through r (uncached: the cache
// holds no Deployments). It is nil when name is empty or no such Deployment exists (make run): the
// kept objects then get no owner.
func ManagerDeployment(ctx context.Context, r client.Reader, namespace, name string) (*appsv1.Deployment, error) {
	if name == "" {
		return nil, nil
	}
	d := &appsv1.Deployment{}
	switch err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, d); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return d, nil
}

// OwnedBy is the owner reference that makes the manager's Deployment d the controller of a kept
// object, so that uninstalling the manager (kustomize or OLM) garbage-collects the object.
func OwnedBy(d *appsv1.Deployment) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: new(true)}
}
