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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
)

// Workload is a resolved workload. Desired is nil when the top owner's kind has no replica count
// the manager can read; its live pods then count as desired.
type Workload struct {
	Ref     rules.WorkloadRef
	Desired *int32
	// Bound: Desired only bounds the live pods (a Job): desired is the smaller of the two.
	Bound bool
}

// Workloads resolves pods to their workload: the top controller owner of any kind, a pod without
// one being a workload of one (docs/policy.md, "Workload"). One serves the decision and the
// policy-status controllers, and remembers what it can:
//   - owners read without the cache, for ownerTTL (owners);
//   - the workload of each controller reference whose walk read only cached owners, until an
//     owner of its namespace appears, goes or changes controller (resolutions): the status
//     resolves every enrolled pod of a namespace on each refresh;
//   - the workload of each pod, and of its controller, the decision resolved (learned), so that an
//     event on either wakes the held pods of the workload.
type Workloads struct {
	cache    client.Reader
	owners   *owners
	resolved *resolutions
	learned  *learned
}

// NewWorkloads returns a resolver reading apps/v1 owners from cache, and other kinds' metadata
// from api and their /scale subresource through scale.
func NewWorkloads(cache, api client.Reader, scale client.SubResourceClientConstructor, c clock.PassiveClock) *Workloads {
	return &Workloads{cache: cache, owners: newOwners(cache, api, scale, c), resolved: newResolutions(), learned: newLearned()}
}

// Resolve walks up the pod's controller references to the top owner the manager can read (a
// ReplicaSet owned by a Deployment resolves to the Deployment), with its desired replicas.
func (w *Workloads) Resolve(ctx context.Context, pod *corev1.Pod) (Workload, error) {
	return resolve(pod, w.owners.lookup(ctx, pod.Namespace))
}

// Key is the key of the pod's workload as Resolve finds it, without its desired replicas. The
// policy-status controller asks it of every enrolled pod on each refresh, so the answer is
// remembered per controller reference (a Deployment's pods share their ReplicaSet's) when the
// walk read only cached owners. Walks through other kinds are not remembered: their reads are
// remembered for ownerTTL already, and no event says when they change.
func (w *Workloads) Key(ctx context.Context, pod *corev1.Pod) (rules.WorkloadKey, error) {
	ref := metav1.GetControllerOfNoCopy(pod)
	var k OwnerKey
	var gen uint64
	if ref != nil {
		k = OwnerKey{Namespace: pod.Namespace, APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}
		wk, g, ok := w.resolved.lookup(k)
		if ok {
			return wk, nil
		}
		gen = g
	}
	cachedOnly := ref != nil
	lookup := w.owners.lookup(ctx, pod.Namespace)
	wl, err := resolve(pod, func(r metav1.OwnerReference) (*Owner, error) {
		cachedOnly = cachedOnly && cachedKind(r)
		return lookup(r)
	})
	if err != nil {
		return rules.WorkloadKey{}, err
	}
	key := wl.Ref.Key(pod.Namespace)
	if cachedOnly {
		w.resolved.remember(gen, k, key)
	}
	return key, nil
}

// Of returns the workload the decision resolved for a pod UID or a controller UID.
func (w *Workloads) Of(uid types.UID) (rules.WorkloadKey, bool) { return w.learned.of(uid) }

// ForgetPod forgets what was learned of a pod that is gone.
func (w *Workloads) ForgetPod(uid types.UID) { w.learned.forgetPod(uid) }

// ForgetOwner forgets what was learned of a controller that is gone (a ReplicaSet of an old
// rollout), so the memo does not grow across rollouts.
func (w *Workloads) ForgetOwner(uid types.UID) { w.learned.forgetOwner(uid) }

// learn remembers the workload the decision resolved for the pod and its controller.
func (w *Workloads) learn(pod *corev1.Pod, key rules.WorkloadKey) {
	var owner types.UID
	if ref := metav1.GetControllerOf(pod); ref != nil {
		owner = ref.UID
	}
	w.learned.learn(pod.UID, owner, key)
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// ForgetOnChange drops the remembered workloads (Key) of a namespace when an apps/v1 owner there
// appears, goes, or changes controller: a ReplicaSet adopted or orphaned, a Deployment deleted
// and recreated. It never enqueues anything.
func (w *Workloads) ForgetOnChange() handler.Funcs {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, _ queue) {
			w.resolved.invalidate(e.Object.GetNamespace())
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ queue) {
			if ControllerChanged(e.ObjectOld, e.ObjectNew) {
				w.resolved.invalidate(e.ObjectNew.GetNamespace())
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ queue) {
			w.resolved.invalidate(e.Object.GetNamespace())
		},
	}
}

// Pods lists the cached (enrolled) pods of the pod's workload wl: pods it controls directly, and
// pods of the ReplicaSets it controls.
func (w *Workloads) Pods(ctx context.Context, pod *corev1.Pod, wl Workload) ([]*corev1.Pod, error) {
	if wl.Ref.Kind == "Pod" && wl.Ref.APIVersion == "v1" {
		return []*corev1.Pod{pod}, nil
	}
	owners := []types.UID{wl.Ref.UID}
	rsList := &appsv1.ReplicaSetList{}
	if err := w.cache.List(ctx, rsList, client.InNamespace(pod.Namespace),
		client.MatchingFields{managercache.ByController: string(wl.Ref.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range rsList.Items {
		owners = append(owners, rsList.Items[i].UID)
	}
	var out []*corev1.Pod
	for _, uid := range owners {
		list := &corev1.PodList{}
		if err := w.cache.List(ctx, list, client.InNamespace(pod.Namespace),
			client.MatchingFields{managercache.ByController: string(uid)}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// maxOwnerDepth bounds the walk up controller references (a cycle would otherwise never end).
const maxOwnerDepth = 5

// resolve walks up controller references from the pod to the top owner lookup can read. A pod
// without a controller is a workload of one, with itself as the reference.
func resolve(pod metav1.Object, lookup ownerLookup) (Workload, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		one := int32(1)
		return Workload{
			Ref:     rules.WorkloadRef{APIVersion: "v1", Kind: "Pod", Name: pod.GetName(), UID: pod.GetUID()},
			Desired: &one,
		}, nil
	}
	var desired *int32
	bound := false
	o, err := lookup(*ref)
	if err != nil {
		return Workload{}, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	// Each owner is read once: the parent read to know whether the walk goes on is the next
	// step's owner (the policy-status controller resolves every enrolled pod of a namespace).
	for range maxOwnerDepth {
		if o == nil {
			break
		}
		desired, bound = o.Replicas, o.Bound
		if o.Controller == nil || o.Top {
			break
		}
		parent, err := lookup(*o.Controller)
		if err != nil {
			return Workload{}, fmt.Errorf("reading %s %s: %w", o.Controller.Kind, o.Controller.Name, err)
		}
		if parent == nil {
			// The parent cannot be read (unknown kind, or gone): the owner we have is the top.
			break
		}
		ref, o = o.Controller, parent
	}
	return Workload{
		Ref:     rules.WorkloadRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID},
		Desired: desired,
		Bound:   bound,
	}, nil
}
