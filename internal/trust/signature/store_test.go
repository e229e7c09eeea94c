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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const testNS = "op-system"

func newStore(c client.Client) *Store {
	return &Store{Client: c, Reader: c, Namespace: testNS, Name: DefaultSecretName}
}

func getSecret(t *testing.T, c client.Client) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: DefaultSecretName}, s); err != nil {
		t.Fatalf("reading the Secret: %v", err)
	}
	return s
}

// trusted reads the trust ConfigMap.
func trusted(t *testing.T, c client.Client) KeySet {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: TrustConfigMapName}, cm); err != nil {
		t.Fatalf("reading the trust ConfigMap: %v", err)
	}
	set, errs := DecodeKeySet(cm)
	if len(errs) > 0 {
		t.Fatalf("trust ConfigMap: %v", errs)
	}
	return set
}

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func syncStore(t *testing.T, s *Store) KeyPair {
	t.Helper()
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	kp, ok := s.Current()
	if !ok {
		t.Fatal("no key after Sync")
	}
	return kp
}

func TestStoreCreatesAKeyAndPublishesItFirst(t *testing.T) {
	var order []string
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme(t)).Build(), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			order = append(order, obj.GetObjectKind().GroupVersionKind().Kind+fmtType(obj))
			return c.Create(ctx, obj, opts...)
		},
	})
	s := newStore(c)
	if err := s.Checker(nil); err == nil {
		t.Fatal("ready before the key is loaded")
	}
	kp := syncStore(t, s)
	if got := getSecret(t, c).Data[SecretSigningKeyData]; !bytes.Equal(got, kp.Private.Seed()) {
		t.Fatal("the Secret does not hold the key in use")
	}
	if k, ok := trusted(t, c)[kp.ID]; !ok || !bytes.Equal(k.Public, kp.Public()) || !k.Retired.IsZero() {
		t.Fatalf("public key %s not published: %+v", kp.ID, trusted(t, c))
	}
	if strings.Join(order, ",") != "ConfigMap,Secret" {
		t.Fatalf("created %v; the public key must be published before the Secret exists", order)
	}
	select {
	case <-s.Loaded():
	default:
		t.Fatal("Loaded not closed")
	}
	if err := s.Checker(nil); err != nil {
		t.Fatalf("not ready with the key loaded: %v", err)
	}
	// A second replica reads the same key.
	if kp2 := syncStore(t, newStore(c)); kp2.ID != kp.ID {
		t.Fatal("two replicas hold different keys")
	}
}

func fmtType(obj client.Object) string {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	}
	return "?"
}

// A Secret of that name without a signing key (created by hand, say) gets one, its other data kept.
func TestStoreAddsAKeyToASecretWithoutOne(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: DefaultSecretName},
		Data:       map[string][]byte{"note": []byte("kept")},
	}).Build()
	kp := syncStore(t, newStore(c))
	sec := getSecret(t, c)
	if string(sec.Data["note"]) != "kept" || !bytes.Equal(sec.Data[SecretSigningKeyData], kp.Private.Seed()) {
		t.Fatalf("Secret data %q: want the other data kept and the new key added", sec.Data)
	}
	if kp2 := syncStore(t, newStore(c)); kp2.ID != kp.ID {
		t.Fatal("another replica reads another key")
	}
	if _, ok := trusted(t, c)[kp.ID]; !ok {
		t.Fatal("new key not published")
	}
}

func TestStoreRotatesWhenTheSecretIsDeletedAndKeepsThePreviousPublicKey(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	s := newStore(c)
	first := syncStore(t, s)
	if err := c.Delete(context.Background(), getSecret(t, c)); err != nil {
		t.Fatal(err)
	}
	second := syncStore(t, s)
	if second.ID == first.ID {
		t.Fatal("a deleted Secret did not rotate the key")
	}
	set := trusted(t, c)
	if _, ok := set[first.ID]; !ok {
		t.Fatalf("previous public key dropped by the rotation: %v", set)
	}
	if _, ok := set[second.ID]; !ok {
		t.Fatalf("new public key not published: %v", set)
	}
}

func TestStorePicksUpAChangedKeyAndRefusesABadOne(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	s := newStore(c)
	syncStore(t, s)
	rotated, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	sec := getSecret(t, c)
	sec.Data[SecretSigningKeyData] = rotated.Private.Seed()
	if err := c.Update(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	if kp := syncStore(t, s); kp.ID != rotated.ID {
		t.Fatal("changed key not picked up")
	}
	if _, ok := trusted(t, c)[rotated.ID]; !ok {
		t.Fatal("a key written into the Secret by hand was used without being published")
	}
	sec = getSecret(t, c)
	sec.Data[SecretSigningKeyData] = []byte("short")
	if err := c.Update(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	err = s.Sync(context.Background())
	if err == nil || !strings.Contains(err.Error(), `data["signing-key"]`) {
		t.Fatalf("a 5-byte seed: err = %v, want one naming the field", err)
	}
	if kp, _ := s.Current(); kp.ID != rotated.ID {
		t.Fatal("a bad Secret replaced the key held")
	}
}

func TestStoreReadsTheKeyAnotherReplicaCreatedFirst(t *testing.T) {
	theirs, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	base := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	raced := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				// The other replica's Secret lands between our read and our create.
				_ = c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: DefaultSecretName},
					Data: map[string][]byte{SecretSigningKeyData: theirs.Private.Seed()}})
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	s := newStore(raced)
	if kp := syncStore(t, s); kp.ID != theirs.ID {
		t.Fatalf("key %s; want the one the other replica created (%s)", kp.ID, theirs.ID)
	}
	if _, ok := trusted(t, base)[theirs.ID]; !ok {
		t.Fatal("the other replica's key is used but not published")
	}
}

func TestStoreDoesNotServeAKeyItCouldNotPublish(t *testing.T) {
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme(t)).Build(), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				return errBoom
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	s := newStore(c)
	if err := s.Sync(context.Background()); err == nil {
		t.Fatal("Sync succeeded without publishing")
	}
	if _, ok := s.Current(); ok {
		t.Fatal("a key nobody can verify is in use")
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: DefaultSecretName}, &corev1.Secret{}); err == nil {
		t.Fatal("the Secret was written with an unpublished key")
	}
}
