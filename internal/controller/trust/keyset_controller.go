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
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

const (
	// DefaultRetireGrace is how long a key stays trusted after it stopped being the signing key,
	// even when no pod names it: replicas re-read the Secret every minute and may sign with it
	// until then, and a pod admitted with it may not be in the cache yet.
	DefaultRetireGrace = 10 * time.Minute
	// DefaultKeySetInterval is how often the key set is re-checked against the pods.
	DefaultKeySetInterval = time.Minute
)

// +kubebuilder:rbac:groups="",namespace=enhanced-liveness-system,resources=configmaps,verbs=get;list;watch;create;update

// KeySetReconciler keeps the trust ConfigMap: the signing key in it, keys that are no longer the
// signing key marked retired, and retired keys dropped once no enrolled pod's seal (or, while it is
// unsealed, its admission signature) names them and the grace has passed. A deleted ConfigMap is
// re-created with the keys it last held, so no sealed pod stops being probed; keys removed from
// it by hand stay removed (what to do after a key is compromised, docs/webhooks.md), the key the
// manager signs with excepted: that one is re-read from the Secret before it is put back.
type KeySetReconciler struct {
	// Client reads the ConfigMap and the enrolled pods from the manager's cache and writes the
	// ConfigMap.
	Client client.Client
	// Keys is the signing key. This replica re-reads its Secret only every minute, so after a
	// rotation by another replica it may still hold the previous key: when the ConfigMap no
	// longer lists the key it holds, it is re-read first, and a key revoked (Secret deleted, then
	// the key removed from the ConfigMap) is never put back.
	Keys      SigningKey
	Namespace string
	// Name of the ConfigMap; signature.TrustConfigMapName when empty.
	Name        string
	RetireGrace time.Duration
	Interval    time.Duration
	Now         func() time.Time

	mu    sync.Mutex
	known signature.KeySet
}

// SigningKey is the key the manager signs with, and how to re-read it from the Secret.
type SigningKey interface {
	signature.CurrentKey
	// Sync re-reads the Secret and switches to the key it holds (signature.Store.Sync).
	Sync(ctx context.Context) error
}

func (r *KeySetReconciler) name() string {
	if r.Name != "" {
		return r.Name
	}
	return signature.TrustConfigMapName
}

func (r *KeySetReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile brings the ConfigMap in line and re-checks it every Interval.
func (r *KeySetReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultKeySetInterval
	}
	grace := r.RetireGrace
	if grace <= 0 {
		grace = DefaultRetireGrace
	}
	if _, ok := r.Keys.Current(); !ok {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	now := r.now()
	cm := &corev1.ConfigMap{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.name()}, cm)
	if apierrors.IsNotFound(err) {
		return r.recreate(ctx, now)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	kp, err := r.signingKey(ctx, cm)
	if err != nil {
		return ctrl.Result{}, err
	}
	set, errs := signature.DecodeKeySet(cm)
	for _, e := range errs {
		log.Error(e, "an entry of the trust ConfigMap is left out: it verifies nothing")
	}
	data := maps.Clone(cm.Data)
	if data == nil {
		data = map[string]string{}
	}
	kept := signature.KeySet{}
	for id, k := range set {
		switch {
		case id == kp.ID:
			k.Retired = time.Time{}
		case k.Retired.IsZero():
			k.Retired = now
		case now.Sub(k.Retired) >= grace:
			used, err := r.keyInUse(ctx, id)
			if err != nil {
				return ctrl.Result{}, err
			}
			if !used {
				log.Info("dropping a retired key no pod is sealed with", "key", id, "retired", k.Retired)
				delete(data, id)
				continue
			}
		}
		kept[id] = k
	}
	kept = kept.With(kp, now)
	maps.Copy(data, signature.EncodeKeySet(kept))
	if !maps.Equal(data, cm.Data) {
		cm.Data = data
		if err := r.Client.Update(ctx, cm); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: time.Second}, nil
			}
			return ctrl.Result{}, err
		}
	}
	r.mu.Lock()
	r.known = kept
	r.mu.Unlock()
	TrustedKeys.WithLabelValues("current").Set(1)
	TrustedKeys.WithLabelValues("retired").Set(float64(len(kept) - 1))
	return ctrl.Result{RequeueAfter: interval}, nil
}

// recreate creates the deleted ConfigMap with the keys it last held and the signing key.
func (r *KeySetReconciler) recreate(ctx context.Context, now time.Time) (ctrl.Result, error) {
	kp, _ := r.Keys.Current()
	r.mu.Lock()
	set := r.known.With(kp, now)
	r.mu.Unlock()
	logf.FromContext(ctx).Info("re-creating the trust ConfigMap with the keys it last held", "keys", len(set))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.name(), Labels: map[string]string{
		"app.kubernetes.io/name": "enhanced-liveness-operator", "app.kubernetes.io/managed-by": "enhanced-liveness-operator",
	}}, Data: signature.EncodeKeySet(set)}
	if err := r.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: time.Second}, nil
}

// signingKey is the key to keep listed in cm. When cm does not list the key this replica holds,
// the Secret is re-read first: someone removed that key by hand, most likely after deleting the
// Secret to revoke it, and another replica may already sign with the new one.
func (r *KeySetReconciler) signingKey(ctx context.Context, cm *corev1.ConfigMap) (signature.KeyPair, error) {
	kp, _ := r.Keys.Current()
	if _, listed := cm.Data[kp.ID]; listed {
		return kp, nil
	}
	if err := r.Keys.Sync(ctx); err != nil {
		return signature.KeyPair{}, fmt.Errorf("re-reading the signing key, which the trust ConfigMap no longer lists: %w", err)
	}
	now, _ := r.Keys.Current()
	if now.ID == kp.ID {
		logf.FromContext(ctx).Info("putting back the key the manager signs with, removed from the trust ConfigMap: "+
			"to revoke it, delete the signing-key Secret first", "key", kp.ID)
	}
	return now, nil
}

// keyInUse reports whether an enrolled pod's seal names the key, or its admission signature
// while it is not sealed yet. It asks the cache's index for one such pod: listing every enrolled
// pod copied them all (a transient second copy of the cache, every interval).
func (r *KeySetReconciler) keyInUse(ctx context.Context, id string) (bool, error) {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.MatchingFields{managercache.PodByTrustKey: id}, client.Limit(1),
		client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	return len(pods.Items) > 0, nil
}

// SetupWithManager watches the trust ConfigMap (the manager's cache holds only that one:
// internal/manager/managercache) and reconciles once at start and then every Interval.
func (r *KeySetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.name()}}
	toKey := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{key}
	})
	initial := source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(key)
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("probe-trust-keys").
		Watches(&corev1.ConfigMap{}, toKey).
		WatchesRawSource(initial).
		Complete(r)
}
