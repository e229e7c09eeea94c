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
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// ownerTTL is how long an owner read without the cache is remembered: a storm decided pod by pod
// reads each owner once, and a replica count changed by hand is seen within it.
const ownerTTL = 30 * time.Second

// owners reads the controllers the workload walk passes through. apps/v1 ReplicaSets,
// Deployments and StatefulSets come from the manager's cache. Any other kind (an Argo Rollout, a
// Kruise CloneSet, a Job, an operator's own CRD) is read with a metadata-only request, and its
// desired replicas from its /scale subresource when it has one; these reads are remembered for
// ownerTTL. An owner that cannot be read (gone, unknown kind, or not readable by the manager's
// RBAC) ends the walk below it.
type owners struct {
	cache client.Reader // the manager's cache
	api   client.Reader // uncached metadata reads
	scale client.SubResourceClientConstructor
	clock clock.PassiveClock

	mu   sync.Mutex
	memo map[types.UID]ownerRead
}

type ownerRead struct {
	owner *Owner // nil: cannot be read
	at    time.Time
}

// Owner is what an owner lookup found for a controller reference.
type Owner struct {
	// Controller is the owner's own controller reference, nil at the top.
	Controller *metav1.OwnerReference
	// Replicas is the owner's desired replicas, nil when the kind has none.
	Replicas *int32
	// Top ends the walk here even though the owner has a controller: a Job is the workload of its
	// pods, not the CronJob above it (each run has its own pods and its own parallelism).
	Top bool
	// Bound: Replicas is only an upper bound of the pods that should run (a Job's pods that have
	// not been made yet are work to come, not unavailable replicas).
	Bound bool
}

// ownerLookup finds the object a controller reference points to. It returns nil, nil when the
// object does not exist or its kind is not one the manager can read; the walk then stops at that
// reference.
type ownerLookup func(ref metav1.OwnerReference) (*Owner, error)

func newOwners(cache, api client.Reader, scale client.SubResourceClientConstructor, c clock.PassiveClock) *owners {
	return &owners{cache: cache, api: api, scale: scale, clock: c, memo: map[types.UID]ownerRead{}}
}

// Kinds of apps/v1 owners the facts read from the cache or a pod's template.
const (
	kindReplicaSet  = "ReplicaSet"
	kindStatefulSet = "StatefulSet"
)

// cachedKind: owners of these kinds are read from the manager's cache, whose events tell when
// they change.
func cachedKind(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == appsv1.GroupName &&
		(ref.Kind == kindReplicaSet || ref.Kind == "Deployment" || ref.Kind == kindStatefulSet)
}

// lookup returns the owner lookup of namespace ns.
func (o *owners) lookup(ctx context.Context, ns string) ownerLookup {
	return func(ref metav1.OwnerReference) (*Owner, error) {
		if cachedKind(ref) {
			return o.cached(ctx, ns, ref)
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return nil, nil
		}
		return o.read(ctx, ns, gv.WithKind(ref.Kind), ref)
	}
}

// cached reads an apps/v1 owner from the cache.
func (o *owners) cached(ctx context.Context, ns string, ref metav1.OwnerReference) (*Owner, error) {
	var obj client.Object
	switch ref.Kind {
	case kindReplicaSet:
		obj = &appsv1.ReplicaSet{}
	case "Deployment":
		obj = &appsv1.Deployment{}
	default:
		obj = &appsv1.StatefulSet{}
	}
	if err := o.cache.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj, unsafeGet); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if ref.UID != "" && obj.GetUID() != ref.UID {
		return nil, nil
	}
	out := &Owner{Controller: metav1.GetControllerOf(obj)}
	switch t := obj.(type) {
	case *appsv1.ReplicaSet:
		out.Replicas = replicasOrOne(t.Spec.Replicas)
	case *appsv1.Deployment:
		out.Replicas = replicasOrOne(t.Spec.Replicas)
	case *appsv1.StatefulSet:
		out.Replicas = replicasOrOne(t.Spec.Replicas)
	}
	return out, nil
}

// read reads an owner of any other kind: its metadata, and its /scale subresource if it has one.
func (o *owners) read(ctx context.Context, ns string, gvk schema.GroupVersionKind, ref metav1.OwnerReference) (*Owner, error) {
	now := o.clock.Now()
	o.mu.Lock()
	r, ok := o.memo[ref.UID]
	o.mu.Unlock()
	if ok && now.Sub(r.at) < ownerTTL {
		return r.owner, nil
	}
	var obj client.Object
	if gvk.Group == batchv1.GroupName && gvk.Kind == "Job" {
		obj = &batchv1.Job{} // read whole: its desired count is in its spec and status
	} else {
		partial := &metav1.PartialObjectMetadata{}
		partial.SetGroupVersionKind(gvk)
		obj = partial
	}
	err := o.api.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj)
	var owner *Owner
	switch {
	case err == nil && (ref.UID == "" || obj.GetUID() == ref.UID):
		owner = &Owner{Controller: metav1.GetControllerOf(obj)}
		if job, ok := obj.(*batchv1.Job); ok {
			owner.Replicas, owner.Top, owner.Bound = ptr.To(JobDesired(job)), true, true
		} else if owner.Replicas, err = o.replicas(ctx, ns, gvk, ref.Name); err != nil {
			return nil, err
		}
	case err == nil, unreadable(err):
		// A replaced owner, a gone one, an unknown kind, or one the manager may not read: the
		// walk ends below it.
		if err != nil {
			logf.FromContext(ctx).V(1).Info("owner not readable: the workload ends below it",
				"kind", gvk.Kind, "name", ref.Name, "reason", err.Error())
		}
	default:
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.memo[ref.UID] = ownerRead{owner: owner, at: now}
	for uid, r := range o.memo {
		if now.Sub(r.at) >= ownerTTL {
			delete(o.memo, uid)
		}
	}
	return owner, nil
}

// replicas reads spec.replicas from the owner's /scale subresource; nil when it has none (its
// live pods then count as desired).
func (o *owners) replicas(ctx context.Context, ns string, gvk schema.GroupVersionKind, name string) (*int32, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(ns)
	obj.SetName(name)
	// The unstructured client answers in kind: the Scale comes back unstructured too.
	scale := &unstructured.Unstructured{}
	scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	err := o.scale.SubResource("scale").Get(ctx, obj, scale)
	switch {
	case err == nil:
		n, found, err := unstructured.NestedInt64(scale.Object, "spec", "replicas")
		if err != nil || !found {
			return ptr.To[int32](0), nil // a Scale without spec.replicas asks for none
		}
		return ptr.To(int32(n)), nil
	case unreadable(err):
		return nil, nil
	default:
		return nil, err
	}
}

// unreadable: the object or subresource does not exist, the kind is unknown, or RBAC forbids the
// read. None of these is an error of the decision.
func unreadable(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || meta.IsNoMatchError(err) ||
		apierrors.IsMethodNotSupported(err)
}

// JobDesired is how many pods of a Job should be running: its parallelism (1 when unset),
// bounded by the completions still missing, and at least 1, since it is asked about a pod of the
// Job that exists.
func JobDesired(job *batchv1.Job) int32 {
	n := ptr.Deref(job.Spec.Parallelism, 1)
	if c := job.Spec.Completions; c != nil {
		n = min(n, *c-job.Status.Succeeded)
	}
	return max(n, 1)
}

// replicasOrOne applies the API default of spec.replicas.
func replicasOrOne(r *int32) *int32 {
	if r == nil {
		return ptr.To[int32](1)
	}
	return r
}
