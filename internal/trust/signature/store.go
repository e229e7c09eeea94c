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
	"context"
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

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/ssa"
)

// Data keys of the signing Secret.
const (
	// SecretSigningKeyData holds the 32-byte Ed25519 seed of the signing key.
	SecretSigningKeyData = "signing-key"

	// DefaultSecretName is the Secret's name in the operator namespace.
	DefaultSecretName = "enhanced-liveness-operator-probe-signing-key"
	// DefaultRecheckInterval is how often every replica re-reads the Secret.
	DefaultRecheckInterval = time.Minute
)

// +kubebuilder:rbac:groups="",namespace=enhanced-liveness-system,resources=secrets,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace=enhanced-liveness-system,resources=configmaps,verbs=get;create;update

// Store holds the signing key of the manager. Every replica runs one (each serves the pod
// webhook, the leader also seals pods): it reads the Secret, and when the Secret is absent, or
// holds no signing key (created empty by hand), it generates an Ed25519 key, publishes its public key
// in the trust ConfigMap and only then writes the Secret. It re-reads the Secret periodically and
// switches to a changed key the same way (publish first). Deleting the Secret therefore rotates
// the key: the previous public key stays in the trust ConfigMap, so every pod sealed with it
// keeps being probed.
type Store struct {
	// Client writes the Secret and the ConfigMap; Reader reads the Secret directly from the
	// apiserver (the manager's cache holds no Secrets).
	Client    client.Client
	Reader    client.Reader
	Namespace string
	Name      string
	// TrustConfigMap is where public keys are published; TrustConfigMapName when empty.
	TrustConfigMap string
	// Interval between re-reads; DefaultRecheckInterval when zero.
	Interval time.Duration
	// Now is the clock of the publication times; time.Now when nil.
	Now func() time.Time

	mu      sync.RWMutex
	current *KeyPair
	loaded  chan struct{}
	once    sync.Once
}

func (s *Store) init() { s.once.Do(func() { s.loaded = make(chan struct{}) }) }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) trustConfigMap() string {
	if s.TrustConfigMap != "" {
		return s.TrustConfigMap
	}
	return TrustConfigMapName
}

// Current returns the signing key; false until the Secret was read and the key published.
func (s *Store) Current() (KeyPair, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.current == nil {
		return KeyPair{}, false
	}
	return *s.current, true
}

// Loaded is closed once the key is known.
func (s *Store) Loaded() <-chan struct{} {
	s.init()
	return s.loaded
}

// Checker is a readiness check: a replica without the key must not serve the pod webhook.
func (s *Store) Checker(*http.Request) error {
	if _, ok := s.Current(); !ok {
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
			if _, ok := s.Current(); !ok { // not serving yet: retry soon, backing off
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

// Sync reads the Secret once, creating it (or adding an Ed25519 key to a Secret without one)
// when needed, and switches to the key it holds, publishing its public key first.
func (s *Store) Sync(ctx context.Context) error {
	s.init()
	nn := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
	secret := &corev1.Secret{}
	err := s.Reader.Get(ctx, nn, secret)
	switch {
	case apierrors.IsNotFound(err):
		secret, err = s.create(ctx)
		if apierrors.IsAlreadyExists(err) { // another replica was first
			secret = &corev1.Secret{}
			err = s.Reader.Get(ctx, nn, secret)
		}
	case err == nil && len(secret.Data[SecretSigningKeyData]) == 0:
		err = s.addKey(ctx, secret)
	}
	if err != nil {
		return err
	}
	kp, err := KeyPairFromSeed(secret.Data[SecretSigningKeyData])
	if err != nil {
		return fmt.Errorf("secret %s/%s: data[%q]: %w", secret.Namespace, secret.Name, SecretSigningKeyData, err)
	}
	if cur, ok := s.Current(); !ok || cur.ID != kp.ID {
		// Published before use; also when another replica wrote the Secret (its publication may
		// have been lost to a ConfigMap deleted meanwhile).
		if err := Publish(ctx, s.Client, s.Namespace, s.trustConfigMap(), kp, s.now()); err != nil {
			return fmt.Errorf("publishing public key %s: %w", kp.ID, err)
		}
	}
	s.mu.Lock()
	first := s.current == nil
	s.current = &kp
	s.mu.Unlock()
	if first {
		close(s.loaded)
	}
	return nil
}

// newPublishedKey generates a key pair and publishes its public key.
func (s *Store) newPublishedKey(ctx context.Context) (KeyPair, error) {
	kp, err := GenerateKeyPair()
	if err != nil {
		return KeyPair{}, err
	}
	if err := Publish(ctx, s.Client, s.Namespace, s.trustConfigMap(), kp, s.now()); err != nil {
		return KeyPair{}, fmt.Errorf("publishing public key %s: %w", kp.ID, err)
	}
	return kp, nil
}

// create writes the Secret with a new key.
func (s *Store) create(ctx context.Context) (*corev1.Secret, error) {
	kp, err := s.newPublishedKey(ctx)
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: ssa.ManagedLabels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{SecretSigningKeyData: kp.Private.Seed()},
	}
	if err := s.Client.Create(ctx, secret); err != nil {
		return nil, err
	}
	return secret, nil
}

// addKey adds a new key to a Secret that holds none (created by hand), keeping its other data.
func (s *Store) addKey(ctx context.Context, secret *corev1.Secret) error {
	kp, err := s.newPublishedKey(ctx)
	if err != nil {
		return err
	}
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	secret.Data[SecretSigningKeyData] = kp.Private.Seed()
	// A conflict means another replica did the same: the next Sync reads its key.
	return s.Client.Update(ctx, secret)
}
