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

package policy

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/restarts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// Which owner events forget the remembered workloads of their namespace (the envtest spec in
// status_test.go follows a re-parented ReplicaSet end to end).
func TestOwnersForgetOnChange(t *testing.T) {
	rs := func(ns, controller string) *appsv1.ReplicaSet {
		r := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1", UID: "rs"}}
		if controller != "" {
			r.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: controller,
				UID: types.UID("d-" + controller), Controller: ptr.To(true)}}
		}
		return r
	}
	scaled := rs("shop", "web")
	scaled.Spec.Replicas = ptr.To[int32](5)
	cases := []struct {
		what           string
		created, gone  client.Object
		oldObj, newObj client.Object // an update
		forget         bool
	}{
		{what: "an owner appears", created: rs("shop", "web"), forget: true},
		{what: "an owner goes", gone: rs("shop", "web"), forget: true},
		{what: "an owner is adopted by another controller", oldObj: rs("shop", "web"), newObj: rs("shop", "api"), forget: true},
		{what: "an owner is orphaned", oldObj: rs("shop", "web"), newObj: rs("shop", ""), forget: true},
		{what: "an owner is scaled", oldObj: rs("shop", "web"), newObj: scaled},
		{what: "an owner appears in another namespace", created: rs("other", "web")},
	}
	key := restarts.OwnerKey{Namespace: "shop", APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs"}
	web := protection.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "Deployment", Name: "web"}
	for _, c := range cases {
		o := newOwners(nil, nil, nil, nil)
		_, gen, _ := o.resolved.Lookup(key)
		o.resolved.Remember(gen, key, web)
		f, ctx := o.forgetOnChange(), context.Background()
		switch {
		case c.created != nil:
			f.Create(ctx, event.CreateEvent{Object: c.created}, nil)
		case c.gone != nil:
			f.Delete(ctx, event.DeleteEvent{Object: c.gone}, nil)
		default:
			f.Update(ctx, event.UpdateEvent{ObjectOld: c.oldObj, ObjectNew: c.newObj}, nil)
		}
		if _, _, kept := o.resolved.Lookup(key); kept == c.forget {
			t.Errorf("%s: remembered workload kept = %v, want %v", c.what, kept, !c.forget)
		}
	}
}

// workloadKey remembers walks that read only cached owners, and only those: a Job's pods are
// resolved again each time (its reads have their own TTL, and no event says when they change).
func TestOwnersWorkloadKey(t *testing.T) {
	ctx := context.Background()
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "d-web"}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "rs",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-web",
			Controller: ptr.To(true)}}}}
	cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(dep, rs).Build()
	// The uncached reader finds nothing: a Job that cannot be read is its pods' top owner.
	api := fake.NewClientBuilder().WithScheme(testutil.Scheme()).Build()
	o := newOwners(cache, api, api, clock.RealClock{})
	pod := func(kind, name string, uid types.UID) *corev1.Pod {
		apiVersion := map[string]string{"ReplicaSet": "apps/v1", "Job": "batch/v1"}[kind]
		return testutil.NewPod("shop", "p-"+name).ControlledBy(apiVersion, kind, name, uid).Build()
	}
	web := protection.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "Deployment", Name: "web"}
	once := protection.WorkloadKey{Namespace: "shop", Group: "batch", Kind: "Job", Name: "once"}
	check := func(what string, p *corev1.Pod, want protection.WorkloadKey, wantRemembered bool) {
		t.Helper()
		got, err := o.workloadKey(ctx, p)
		if err != nil || got != want {
			t.Fatalf("%s: workloadKey = %v, %v; want %v", what, got, err, want)
		}
		ref := metav1.GetControllerOfNoCopy(p)
		_, _, ok := o.resolved.Lookup(restarts.OwnerKey{Namespace: p.Namespace, APIVersion: ref.APIVersion,
			Kind: ref.Kind, Name: ref.Name, UID: ref.UID})
		if ok != wantRemembered {
			t.Fatalf("%s: remembered = %v, want %v", what, ok, wantRemembered)
		}
	}
	check("a Deployment's pod", pod("ReplicaSet", "web-1", "rs"), web, true)
	// The cache loses the Deployment; without the event that reports it the answer stands.
	if err := cache.Delete(ctx, dep); err != nil {
		t.Fatal(err)
	}
	check("its sibling, from memory", pod("ReplicaSet", "web-1", "rs"), web, true)
	o.forgetOnChange().Delete(ctx, event.DeleteEvent{Object: dep}, nil)
	check("after the event", pod("ReplicaSet", "web-1", "rs"), protection.WorkloadKey{Namespace: "shop", Group: "apps",
		Kind: "ReplicaSet", Name: "web-1"}, true)
	check("a Job's pod", pod("Job", "once", "j"), once, false)
}
