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
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// OwnerKey is a pod's controller reference in its namespace. The UID tells an owner deleted and
// recreated under the same name apart.
type OwnerKey struct {
	Namespace, APIVersion, Kind, Name string
	UID                               types.UID
}

// resolutions remember which workload a controller reference resolves to (a ReplicaSet to its
// Deployment), so that the policy-status controller, which looks at every enrolled pod of a
// namespace on each refresh, does not walk the owners of each pod again. An answer depends only on
// which owners exist and on their controller references, so it holds until an owner in its
// namespace is created, deleted or given another controller: the caller reports those with
// invalidate.
type resolutions struct {
	mu   sync.Mutex
	gens map[string]uint64                         // namespace -> invalidations so far
	refs map[string]map[OwnerKey]rules.WorkloadKey // by namespace
}

func newResolutions() *resolutions {
	return &resolutions{gens: map[string]uint64{}, refs: map[string]map[OwnerKey]rules.WorkloadKey{}}
}

// lookup returns the workload remembered for k. When there is none it returns the generation to
// hand to remember with the answer the caller then resolves.
func (r *resolutions) lookup(k OwnerKey) (w rules.WorkloadKey, gen uint64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok = r.refs[k.Namespace][k]
	return w, r.gens[k.Namespace], ok
}

// remember stores the workload resolved for k after lookup returned gen. If the namespace was
// invalidated since, the answer may come from reads made before the change and is dropped.
func (r *resolutions) remember(gen uint64, k OwnerKey, w rules.WorkloadKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gens[k.Namespace] != gen {
		return
	}
	ns := r.refs[k.Namespace]
	if ns == nil {
		ns = map[OwnerKey]rules.WorkloadKey{}
		r.refs[k.Namespace] = ns
	}
	ns[k] = w
}

// invalidate forgets every answer in namespace: an owner there was created, deleted or
// re-parented. Forgetting them all keeps the memo bounded by the owners in use.
func (r *resolutions) invalidate(namespace string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gens[namespace]++
	delete(r.refs, namespace)
}

// ControllerChanged reports whether an update of an owner can change what resolves through it:
// its controller reference (adoption, orphaning). Status and spec updates cannot.
func ControllerChanged(oldObj, newObj metav1.Object) bool {
	if oldObj.GetUID() != newObj.GetUID() {
		return true
	}
	a, b := metav1.GetControllerOfNoCopy(oldObj), metav1.GetControllerOfNoCopy(newObj)
	if a == nil || b == nil {
		return (a == nil) != (b == nil)
	}
	return a.APIVersion != b.APIVersion || a.Kind != b.Kind || a.Name != b.Name || a.UID != b.UID
}
