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

package signature

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/ssa"
)

// TrustConfigMapName is the ConfigMap in the operator namespace that lists the public keys
// signatures are verified with: one data entry per key, named by its key ID. The manager keeps it;
// the daemons read it (their Role allows this one name only).
const TrustConfigMapName = "enhanced-liveness-operator-probe-trust"

// trustEntry is one key of the trust ConfigMap, as JSON.
type trustEntry struct {
	// PublicKey is the raw 32-byte Ed25519 public key (base64 in JSON).
	PublicKey []byte    `json:"publicKey"`
	Added     time.Time `json:"added"`
	Retired   time.Time `json:"retired,omitzero"`
}

// DecodeKeySet reads the trust ConfigMap. An entry that does not parse, or whose name is not the
// ID of its key, is left out with an error naming it: a damaged entry never trusts anything.
func DecodeKeySet(cm *corev1.ConfigMap) (KeySet, []error) {
	out := KeySet{}
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(cm.Data)) {
		var e trustEntry
		dec := json.NewDecoder(bytes.NewReader([]byte(cm.Data[id])))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			errs = append(errs, fmt.Errorf("configmap %s/%s: data[%q]: %w", cm.Namespace, cm.Name, id, err))
			continue
		}
		if len(e.PublicKey) != ed25519.PublicKeySize || KeyID(e.PublicKey) != id {
			errs = append(errs, fmt.Errorf("configmap %s/%s: data[%q]: publicKey must be a %d-byte Ed25519 key whose ID is %q",
				cm.Namespace, cm.Name, id, ed25519.PublicKeySize, id))
			continue
		}
		out[id] = TrustedKey{Public: ed25519.PublicKey(e.PublicKey), Added: e.Added, Retired: e.Retired}
	}
	return out, errs
}

// EncodeKeySet is the data of the trust ConfigMap holding s.
func EncodeKeySet(s KeySet) map[string]string {
	out := make(map[string]string, len(s))
	for id, k := range s {
		b, _ := json.Marshal(trustEntry{PublicKey: k.Public, Added: k.Added.UTC().Truncate(time.Second),
			Retired: k.Retired.UTC().Truncate(time.Second)})
		out[id] = string(b)
	}
	return out
}

// Publish adds kp's public key to the trust ConfigMap ns/name, creating it when absent. A key is
// published before anything is signed with it, so that a daemon holds it before it meets a seal
// it made.
func Publish(ctx context.Context, c client.Client, ns, name string, kp KeyPair, now time.Time) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm)
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: ssa.ManagedLabels()}, Data: EncodeKeySet(KeySet{}.With(kp, now))}
			err = c.Create(ctx, cm)
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(corev1.Resource("configmaps"), name, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		set, _ := DecodeKeySet(cm)
		if k, ok := set[kp.ID]; ok && k.Retired.IsZero() {
			return nil
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		k := TrustedKey{Public: kp.Public(), Added: now}
		if old, ok := set[kp.ID]; ok {
			k.Added = old.Added // in use again: no longer retired
		}
		maps.Copy(cm.Data, EncodeKeySet(KeySet{kp.ID: k}))
		return c.Update(ctx, cm)
	})
}

// CurrentKey gives the key the manager signs with (a *Store).
type CurrentKey interface {
	Current() (KeyPair, bool)
}

// Trust is the key set the manager verifies with: the trust ConfigMap, read through the manager's
// cache, and the key it signs with (published before use, but the cache may not show it yet).
type Trust struct {
	Reader    client.Reader
	Namespace string
	// Name of the trust ConfigMap; TrustConfigMapName when empty.
	Name string
	Keys CurrentKey
}

// KeySet returns the trusted keys; false while the manager holds no signing key yet (nothing
// can be judged: a pod sealed with the key being loaded would look untrusted).
func (t *Trust) KeySet(ctx context.Context) (KeySet, bool, error) {
	kp, ok := t.Keys.Current()
	if !ok {
		return nil, false, nil
	}
	name := t.Name
	if name == "" {
		name = TrustConfigMapName
	}
	cm := &corev1.ConfigMap{}
	set := KeySet{}
	switch err := t.Reader.Get(ctx, types.NamespacedName{Namespace: t.Namespace, Name: name}, cm); {
	case err == nil:
		set, _ = DecodeKeySet(cm)
	case !apierrors.IsNotFound(err):
		return nil, false, err
	}
	return set.With(kp, time.Now()), true, nil
}
