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
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Data keys of the signing Secret.
const (
	// SecretKeyData holds the HMAC key (at least MinKeyBytes bytes).
	SecretKeyData = "key"
	// SecretSinceData, when present, overrides the Secret's creationTimestamp as Key.Since: a
	// Secret the manager re-creates after it was deleted keeps the original time.
	SecretSinceData = "since"

	// DefaultSecretName is the Secret's name in the operator namespace.
	DefaultSecretName = "enhanced-liveness-operator-probe-signing-key"
	// DefaultRecheckInterval is how often every replica re-reads the Secret.
	DefaultRecheckInterval = time.Minute
)

// +kubebuilder:rbac:groups="",namespace=enhanced-liveness-system,resources=secrets,verbs=get;create

// Store holds the signing key of the manager. Every replica runs one (each serves the pod
// webhook, the leader also maps probes): at start it reads the Secret and creates it with a
// random key when it is absent; then it re-reads it periodically, picks up a changed key, and
// re-creates a deleted Secret with the key it holds, so an accidental deletion does not
// invalidate the signatures of every running pod.
type Store struct {
	// Client creates the Secret; Reader reads it directly from the apiserver (the manager's cache
	// holds no Secrets).
	Client    client.Client
	Reader    client.Reader
	Namespace string
	Name      string
	// Interval between re-reads; DefaultRecheckInterval when zero.
	Interval time.Duration

	mu     sync.RWMutex
	key    *Key
	loaded chan struct{}
	once   sync.Once
}

func (s *Store) init() { s.once.Do(func() { s.loaded = make(chan struct{}) }) }

// Key returns the current key; false until the Secret was read once.
func (s *Store) Key() (Key, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.key == nil {
		return Key{}, false
	}
	return *s.key, true
}

// Loaded is closed once the key is known.
func (s *Store) Loaded() <-chan struct{} {
	s.init()
	return s.loaded
}

// Checker is a readiness check: a replica without the key must not serve the pod webhook.
func (s *Store) Checker(*http.Request) error {
	if _, ok := s.Key(); !ok {
		return errors.New("probe-context signing key not loaded yet")
	}
	return nil
}

// NeedLeaderElection is false: every replica signs.
func (s *Store) NeedLeaderElection() bool { return false }

// Start loads the key, retrying until it succeeds, then re-checks the Secret every Interval.
func (s *Store) Start(ctx context.Context) error {
	s.init()
	log := logf.FromContext(ctx).WithName("probe-signing-key").WithValues("secret", s.Namespace+"/"+s.Name)
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultRecheckInterval
	}
	retry := time.Second
	for {
		wait := interval
		if err := s.Sync(ctx); err != nil {
			log.Error(err, "reading the probe-context signing key")
			if _, ok := s.Key(); !ok { // not serving yet: retry soon, backing off
				wait, retry = min(retry, interval), retry*2
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Sync reads the Secret once, creating it when it is absent, and updates the key held.
func (s *Store) Sync(ctx context.Context) error {
	s.init()
	nn := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
	secret := &corev1.Secret{}
	err := s.Reader.Get(ctx, nn, secret)
	if apierrors.IsNotFound(err) {
		secret, err = s.create(ctx)
		if apierrors.IsAlreadyExists(err) { // another replica was first
			secret = &corev1.Secret{}
			err = s.Reader.Get(ctx, nn, secret)
		}
	}
	if err != nil {
		return err
	}
	k, err := keyFromSecret(secret)
	if err != nil {
		return err
	}
	s.mu.Lock()
	first := s.key == nil
	s.key = &k
	s.mu.Unlock()
	if first {
		close(s.loaded)
	}
	return nil
}

// create writes the Secret: with the key held (it was deleted while this replica ran), else
// with a new random key.
func (s *Store) create(ctx context.Context) (*corev1.Secret, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: map[string]string{
			"app.kubernetes.io/name":       "enhanced-liveness-operator",
			"app.kubernetes.io/managed-by": "enhanced-liveness-operator",
		}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{},
	}
	if k, ok := s.Key(); ok {
		secret.Data[SecretKeyData] = k.Bytes
		secret.Data[SecretSinceData] = []byte(k.Since.UTC().Format(time.RFC3339))
	} else {
		b := make([]byte, MinKeyBytes)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		secret.Data[SecretKeyData] = b
	}
	if err := s.Client.Create(ctx, secret); err != nil {
		return nil, err
	}
	return secret, nil
}

func keyFromSecret(secret *corev1.Secret) (Key, error) {
	b := secret.Data[SecretKeyData]
	if len(b) < MinKeyBytes {
		return Key{}, fmt.Errorf("secret %s/%s: data[%q] must hold at least %d bytes, has %d",
			secret.Namespace, secret.Name, SecretKeyData, MinKeyBytes, len(b))
	}
	since := secret.CreationTimestamp.Time
	if v, ok := secret.Data[SecretSinceData]; ok {
		t, err := time.Parse(time.RFC3339, string(v))
		if err != nil {
			return Key{}, fmt.Errorf("secret %s/%s: data[%q] must be an RFC 3339 time: %w",
				secret.Namespace, secret.Name, SecretSinceData, err)
		}
		since = t
	}
	return Key{Bytes: append([]byte(nil), b...), Since: since}, nil
}
