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

package trust

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// admissionMemory is how long a nonce is remembered after its signature was issued: a pod is
// created within MaxSkew of its signature (VerifyAdmission), so after twice that no copy can
// verify; the third MaxSkew covers one replica's measure of the API server's clock against
// another's. The signature is issued, and now given, on the API server's clock
// (SealReconciler.Now).
const admissionMemory = 3 * signature.MaxSkew

// admissions remembers which pods carry each admission nonce (the webhook draws one per
// admission), fed by the watch of enrolled pods, so that a signature is sealed onto one pod only:
// the first created with it, and among pods created in the same second (creation times have a
// one-second resolution) the first the watch delivered, as the API server stored them. It keeps
// only signatures issued within admissionMemory, and keeps them after their pods are deleted, so
// a copy made after the original is gone is refused too. A manager that starts learns every pod
// of the window from its cache's first list, before its workers run.
type admissions struct {
	mu      sync.Mutex
	byNonce map[string][]admission
	pruned  time.Time
}

// admission is one pod with a nonce, small: a mass rollout has one per pod for 15 minutes. Its
// strings are the cached pod's own.
type admission struct {
	uid             types.UID
	namespace, name string
	created, issued int64 // unix seconds
}

// pod is the pod's namespace/name.
func (a admission) pod() string { return a.namespace + "/" + a.name }

// observe records the pod's admission nonce, unless its signature is too old to be copied.
func (a *admissions) observe(pod metav1.Object, now time.Time) {
	nonce, issued, ok := admissionOf(pod)
	if !ok || now.Sub(issued) > admissionMemory {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byNonce == nil {
		a.byNonce = map[string][]admission{}
	}
	if now.Sub(a.pruned) > time.Minute {
		a.prune(now)
	}
	for _, h := range a.byNonce[nonce] {
		if h.uid == pod.GetUID() {
			return
		}
	}
	a.byNonce[nonce] = append(a.byNonce[nonce], admission{uid: pod.GetUID(), namespace: pod.GetNamespace(),
		name: pod.GetName(), created: pod.GetCreationTimestamp().Unix(), issued: issued.Unix()})
}

// holder returns the pod a nonce belongs to: the first created, and of those created in the same
// second the first observed.
func (a *admissions) holder(nonce string) (admission, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	hs := a.byNonce[nonce]
	if len(hs) == 0 {
		return admission{}, false
	}
	first := hs[0]
	for _, h := range hs[1:] {
		if h.created < first.created {
			first = h
		}
	}
	return first, true
}

func (a *admissions) prune(now time.Time) {
	a.pruned = now
	for n, hs := range a.byNonce {
		if now.Sub(time.Unix(hs[0].issued, 0)) > admissionMemory {
			delete(a.byNonce, n)
		}
	}
}

// admissionOf returns the nonce of a pod's admission signature and when it was issued, unverified:
// a pod cannot claim a nonce before the pod it was drawn for exists.
func admissionOf(pod metav1.Object) (string, time.Time, bool) {
	nonce := signature.AdmissionNonce(pod)
	issued, ok := signature.AdmissionIssued(pod)
	return nonce, issued, nonce != "" && ok
}
