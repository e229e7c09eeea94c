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

package facts

import (
	"context"
	"errors"
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

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// Which owner events forget the remembered workloads of their namespace (the envtest spec in
// internal/controller/policystatus/controller_test.go follows a re-parented ReplicaSet end to end).
func TestWorkloadsForgetOnChange(t *testing.T) {
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
	key := OwnerKey{Namespace: "shop", APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs"}
	web := rules.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "Deployment", Name: "web"}
	for _, c := range cases {
		o := NewWorkloads(nil, nil, nil, nil)
		_, gen, _ := o.resolved.lookup(key)
		o.resolved.remember(gen, key, web)
		f, ctx := o.ForgetOnChange(), context.Background()
		switch {
		case c.created != nil:
			f.Create(ctx, event.CreateEvent{Object: c.created}, nil)
		case c.gone != nil:
			f.Delete(ctx, event.DeleteEvent{Object: c.gone}, nil)
		default:
			f.Update(ctx, event.UpdateEvent{ObjectOld: c.oldObj, ObjectNew: c.newObj}, nil)
		}
		if _, _, kept := o.resolved.lookup(key); kept == c.forget {
			t.Errorf("%s: remembered workload kept = %v, want %v", c.what, kept, !c.forget)
		}
	}
}

// Key remembers walks that read only cached owners, and only those: a Job's pods are resolved
// again each time (its reads have their own TTL, and no event says when they change).
func TestWorkloadsKey(t *testing.T) {
	ctx := context.Background()
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "d-web"}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "rs",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-web",
			Controller: ptr.To(true)}}}}
	cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(dep, rs).Build()
	// The uncached reader finds nothing: a Job that cannot be read is its pods' top owner.
	api := fake.NewClientBuilder().WithScheme(testutil.Scheme()).Build()
	o := NewWorkloads(cache, api, api, clock.RealClock{})
	pod := func(kind, name string, uid types.UID) *corev1.Pod {
		apiVersion := map[string]string{"ReplicaSet": "apps/v1", "Job": "batch/v1"}[kind]
		return testutil.NewPod("shop", "p-"+name).ControlledBy(apiVersion, kind, name, uid).Build()
	}
	web := rules.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "Deployment", Name: "web"}
	once := rules.WorkloadKey{Namespace: "shop", Group: "batch", Kind: "Job", Name: "once"}
	check := func(what string, p *corev1.Pod, want rules.WorkloadKey, wantRemembered bool) {
		t.Helper()
		got, err := o.Key(ctx, p)
		if err != nil || got != want {
			t.Fatalf("%s: Key = %v, %v; want %v", what, got, err, want)
		}
		ref := metav1.GetControllerOfNoCopy(p)
		_, _, ok := o.resolved.lookup(OwnerKey{Namespace: p.Namespace, APIVersion: ref.APIVersion,
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
	o.ForgetOnChange().Delete(ctx, event.DeleteEvent{Object: dep}, nil)
	check("after the event", pod("ReplicaSet", "web-1", "rs"), rules.WorkloadKey{Namespace: "shop", Group: "apps",
		Kind: "ReplicaSet", Name: "web-1"}, true)
	check("a Job's pod", pod("Job", "once", "j"), once, false)
}

func ctrlRef(apiVersion, kind, name string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "uid-" + "name", Controller: ptr.To(true)}
}

// The walk up controller references, each owner read once.
func TestResolve(t *testing.T) {
	rs := ctrlRef("apps/v1", "ReplicaSet", "web-abc")
	dep := ctrlRef("apps/v1", "Deployment", "web")
	sts := ctrlRef("apps/v1", "StatefulSet", "db")
	job := ctrlRef("batch/v1", "Job", "once")
	cron := ctrlRef("batch/v1", "CronJob", "nightly")
	cronJob := ctrlRef("batch/v1", "Job", "nightly-1")
	orphanRS := ctrlRef("apps/v1", "ReplicaSet", "orphan")
	loopRS := ctrlRef("apps/v1", "ReplicaSet", "loop")
	objects := map[string]*Owner{
		"web-abc": {Controller: &dep, Replicas: ptr.To[int32](10)},
		"web":     {Replicas: ptr.To[int32](4)},
		"db":      {Replicas: ptr.To[int32](3)},
		"orphan":  {Replicas: ptr.To[int32](2)},
		"loop":    {Controller: &loopRS, Replicas: ptr.To[int32](1)},
		// What owners.read makes of a Job: its desired count, and the walk ends at it.
		"nightly-1": {Controller: &cron, Replicas: ptr.To[int32](2), Top: true},
		"nightly":   {},
	}
	cases := []struct {
		name        string
		owners      []metav1.OwnerReference
		wantKind    string
		wantName    string
		wantDesired *int32
		wantErr     bool
		wantReads   int // lookups made: each owner on the way is read once
	}{
		{"replicaset resolves to its deployment", []metav1.OwnerReference{rs}, "Deployment", "web", ptr.To[int32](4), false, 2},
		{"statefulset", []metav1.OwnerReference{sts}, "StatefulSet", "db", ptr.To[int32](3), false, 1},
		{"replicaset without deployment", []metav1.OwnerReference{orphanRS}, "ReplicaSet", "orphan", ptr.To[int32](2), false, 1},
		{"unknown kind stops there without replicas", []metav1.OwnerReference{job}, "Job", "once", nil, false, 1},
		{"a CronJob's Job is the workload, with the Job's desired count", []metav1.OwnerReference{cronJob}, "Job", "nightly-1",
			ptr.To[int32](2), false, 1},
		{"no owner: workload of one", nil, "Pod", "p", ptr.To[int32](1), false, 0},
		{"non-controller owner is ignored", []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc"}}, "Pod", "p", ptr.To[int32](1), false, 0},
		{"owner cycle terminates", []metav1.OwnerReference{loopRS}, "ReplicaSet", "loop", ptr.To[int32](1), false, 1 + maxOwnerDepth},
		{"lookup error", []metav1.OwnerReference{ctrlRef("apps/v1", "ReplicaSet", "boom")}, "", "", nil, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reads := 0
			lookup := func(ref metav1.OwnerReference) (*Owner, error) {
				reads++
				if ref.Name == "boom" {
					return nil, errors.New("boom")
				}
				return objects[ref.Name], nil
			}
			pod := &metav1.ObjectMeta{Name: "p", UID: "pod-uid", OwnerReferences: c.owners}
			w, err := resolve(pod, lookup)
			if reads != c.wantReads {
				t.Errorf("%d lookups, want %d", reads, c.wantReads)
			}
			if c.wantErr {
				if err == nil {
					t.Fatal("want error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.Ref.Kind != c.wantKind || w.Ref.Name != c.wantName {
				t.Fatalf("got %s", w.Ref)
			}
			if (w.Desired == nil) != (c.wantDesired == nil) || (w.Desired != nil && *w.Desired != *c.wantDesired) {
				t.Fatalf("desired %v, want %v", w.Desired, c.wantDesired)
			}
		})
	}
}

// What the decision learns of pods and their controllers, for the watches.
func TestWorkloadsLearned(t *testing.T) {
	web := rules.WorkloadKey{Namespace: "ns", Group: "apps", Kind: "Deployment", Name: "web"}
	w := NewWorkloads(nil, nil, nil, nil)
	w.learned.learn("pod-1", "rs-1", web)
	w.learned.learn("pod-2", "", web)
	for _, uid := range []string{"pod-1", "pod-2", "rs-1"} {
		if k, ok := w.Of(types.UID(uid)); !ok || k != web {
			t.Errorf("Of(%s) = %v %v", uid, k, ok)
		}
	}
	w.ForgetPod("pod-1")
	w.ForgetOwner("rs-1")
	if _, ok := w.Of("pod-1"); ok {
		t.Error("a forgotten pod is still known")
	}
	if _, ok := w.Of("rs-1"); ok {
		t.Error("a forgotten owner is still known")
	}
}
