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

// Package signature signs and verifies the probe contexts the node daemon runs. The daemon, a
// privileged node agent, runs what a pod's probe-context annotation says (an exec probe is a
// command in the pod's container), so it must run only what the operator's pod webhook admitted,
// for that very pod.
//
// Two Ed25519 signatures, both made with a private key only the manager reads:
//
//   - the admission signature (annotation enhancedliveness.io/probe-context-signature), written by
//     the pod webhook while it admits the pod: the pod's UID does not exist yet, so it binds the
//     namespace, the name (or generateName) and the admission time, and carries a random nonce;
//   - the seal (annotation enhancedliveness.io/probe-context-seal), written by the manager once the
//     pod exists, after checking the admission signature (and that no other pod uses it): it binds
//     the pod's UID, so it cannot be replayed onto any other pod.
//
// Daemons hold public keys only (the trust ConfigMap the manager keeps, KeySet): they can verify
// a seal, never make one.
package signature

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"time"
)

// keyIDBytes is how much of the public key's SHA-256 names a key (16 hex digits).
const keyIDBytes = 8

// KeyPair is the manager's signing key.
type KeyPair struct {
	// ID names the key in signatures and in the trust ConfigMap (KeyID of its public key).
	ID      string
	Private ed25519.PrivateKey
}

// Public returns the key's public half.
func (k KeyPair) Public() ed25519.PublicKey { return k.Private.Public().(ed25519.PublicKey) }

// GenerateKeyPair returns a new random key pair.
func GenerateKeyPair() (KeyPair, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return KeyPair{}, err
	}
	return KeyPairFromSeed(seed)
}

// KeyPairFromSeed returns the key pair of a 32-byte Ed25519 seed (what the Secret stores).
func KeyPairFromSeed(seed []byte) (KeyPair, error) {
	if len(seed) != ed25519.SeedSize {
		return KeyPair{}, fmt.Errorf("an Ed25519 seed has %d bytes, not %d", ed25519.SeedSize, len(seed))
	}
	priv := ed25519.NewKeyFromSeed(seed)
	return KeyPair{ID: KeyID(priv.Public().(ed25519.PublicKey)), Private: priv}, nil
}

// KeyID names a public key: the first bytes of its SHA-256, in hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:keyIDBytes])
}

// TrustedKey is a public key that verifies signatures.
type TrustedKey struct {
	Public ed25519.PublicKey
	// Added is when the manager published the key.
	Added time.Time
	// Retired is when the manager first found the key no longer the one it signs with (zero while
	// it is); a retired key is dropped once no pod's signature names it any more.
	Retired time.Time
}

// KeySet holds the trusted public keys by key ID.
type KeySet map[string]TrustedKey

// With returns a copy of s that also trusts kp's public key (kept as it is when s has it already).
func (s KeySet) With(kp KeyPair, now time.Time) KeySet {
	out := make(KeySet, len(s)+1)
	maps.Copy(out, s)
	if _, ok := out[kp.ID]; !ok {
		out[kp.ID] = TrustedKey{Public: kp.Public(), Added: now}
	}
	return out
}

// ErrNotSigned is wrapped by every verification failure, so callers can tell it from other errors.
var ErrNotSigned = errors.New("the probe context was not admitted by the operator's pod webhook for this pod")

// ErrUnknownKey is wrapped (with ErrNotSigned) when a signature names a key the verifier does not
// hold: during a rotation a daemon may see a new seal a moment before the new public key.
var ErrUnknownKey = errors.New("signed with a key that is not trusted")

// verify checks sig over msg with the key named id.
func (s KeySet) verify(id string, msg []byte, sig string) error {
	k, ok := s[id]
	if !ok || len(k.Public) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: %w (key %s is not in the trusted key set)", ErrNotSigned, ErrUnknownKey, id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !ed25519.Verify(k.Public, msg, raw) {
		return errMismatch
	}
	return nil
}

var errMismatch = errors.New("mismatch")

// message joins the signed parts, NUL-separated after a domain string that keeps the two
// signatures (and any other use of the key) apart. Only the last part may contain a NUL (the
// annotation value); every other part is an API name or a number.
func message(domain string, parts ...string) []byte {
	n := len(domain) + 1
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	b = append(append(b, domain...), 0)
	for _, p := range parts {
		b = append(append(b, p...), 0)
	}
	return b
}

func sign(kp KeyPair, msg []byte) string {
	return base64.RawURLEncoding.EncodeToString(ed25519.Sign(kp.Private, msg))
}
