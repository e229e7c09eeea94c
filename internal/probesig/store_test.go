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

package probesig

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

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

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreCreatesARandomKeyWhenAbsent(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	s := newStore(c)
	if err := s.Checker(nil); err == nil {
		t.Fatal("ready before the key is loaded")
	}
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	k, ok := s.Key()
	if !ok || len(k.Bytes) != MinKeyBytes || bytes.Equal(k.Bytes, make([]byte, MinKeyBytes)) {
		t.Fatalf("key = %v, %t; want %d random bytes", k.Bytes, ok, MinKeyBytes)
	}
	if got := getSecret(t, c).Data[SecretKeyData]; !bytes.Equal(got, k.Bytes) {
		t.Fatal("the Secret does not hold the key in use")
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
	other := newStore(c)
	if err := other.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if k2, _ := other.Key(); !bytes.Equal(k2.Bytes, k.Bytes) {
		t.Fatal("two replicas hold different keys")
	}
}

func TestStoreKeepsAnExistingKeyAndItsCreationTime(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	key := []byte(strings.Repeat("a", 40))
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: DefaultSecretName, CreationTimestamp: metav1.NewTime(created)},
		Data:       map[string][]byte{SecretKeyData: key},
	}).Build()
	s := newStore(c)
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	k, _ := s.Key()
	if !bytes.Equal(k.Bytes, key) || !k.Since.Equal(created) {
		t.Fatalf("key %q since %v; want the Secret's, since its creation %v", k.Bytes, k.Since, created)
	}
}

func TestStoreRecreatesADeletedSecretWithTheSameKey(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	key := []byte(strings.Repeat("a", MinKeyBytes))
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: DefaultSecretName, CreationTimestamp: metav1.NewTime(created)},
		Data:       map[string][]byte{SecretKeyData: key},
	}).Build()
	s := newStore(c)
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(context.Background(), getSecret(t, c)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	sec := getSecret(t, c)
	if !bytes.Equal(sec.Data[SecretKeyData], key) || string(sec.Data[SecretSinceData]) != "2026-01-02T03:04:05Z" {
		t.Fatalf("re-created Secret data = %q; want the same key and since", sec.Data)
	}
	// A fresh replica reading the re-created Secret agrees on Since, whatever its creationTimestamp.
	fresh := newStore(c)
	if err := fresh.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if k, _ := fresh.Key(); !k.Since.Equal(created) || !bytes.Equal(k.Bytes, key) {
		t.Fatalf("fresh replica: key %q since %v", k.Bytes, k.Since)
	}
}

func TestStorePicksUpAChangedKeyAndRefusesABadOne(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	s := newStore(c)
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	sec := getSecret(t, c)
	rotated := []byte(strings.Repeat("r", MinKeyBytes))
	sec.Data[SecretKeyData] = rotated
	if err := c.Update(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if k, _ := s.Key(); !bytes.Equal(k.Bytes, rotated) {
		t.Fatal("changed key not picked up")
	}
	for _, bad := range []map[string][]byte{
		{SecretKeyData: []byte("short")},
		{SecretKeyData: rotated, SecretSinceData: []byte("yesterday")},
	} {
		sec = getSecret(t, c)
		sec.Data = bad
		if err := c.Update(context.Background(), sec); err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(context.Background()); err == nil {
			t.Fatalf("Secret data %q accepted", bad)
		}
		if k, _ := s.Key(); !bytes.Equal(k.Bytes, rotated) {
			t.Fatal("a bad Secret replaced the key held")
		}
	}
}

func TestStoreReadsTheKeyAnotherReplicaCreatedFirst(t *testing.T) {
	theirs := []byte(strings.Repeat("t", MinKeyBytes))
	base := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	raced := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			// The other replica's Secret lands between our read and our create.
			_ = c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: DefaultSecretName},
				Data: map[string][]byte{SecretKeyData: theirs}})
			return c.Create(ctx, obj, opts...)
		},
	})
	s := newStore(raced)
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if k, _ := s.Key(); !bytes.Equal(k.Bytes, theirs) {
		t.Fatalf("key %q; want the one the other replica created", k.Bytes)
	}
}
