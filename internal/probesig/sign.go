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

// Package probesig signs the probe context the pod webhook admits and verifies it where the
// probe-mapping controller hands probes to the node daemon. The daemon, a privileged node agent,
// runs what a pod's probe-context annotation says; the signature proves that the operator's
// webhook admitted that annotation, for a pod of that namespace created at that time, so that an
// annotation written or copied while the webhook and the apiserver's immutability policy were not
// in the way is not run.
package probesig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/probecontext"
)

const (
	// version prefixes every signature, so the scheme can change without ambiguity.
	version = "v1"
	// domain separates these MACs from any other use of the key.
	domain = "enhancedliveness.io/probe-context-signature/v1"

	// MinKeyBytes is the shortest key accepted (the manager generates 32 random bytes).
	MinKeyBytes = 32

	// MaxSkew bounds the distance between the signing time and the pod's creationTimestamp. The
	// webhook signs during admission, a moment before the apiserver stamps the pod; the margin
	// covers the other webhooks of the request and clock skew between the manager and the
	// apiserver. A signature copied onto a pod created later than that does not verify.
	MaxSkew = 5 * time.Minute

	// LegacyGrace extends trust in unsigned pods past the key's creation: during an upgrade the
	// previous manager's replicas keep enrolling pods, unsigned, until the rollout replaces them.
	LegacyGrace = 10 * time.Minute
)

// Key is the signing key and when it started signing.
type Key struct {
	Bytes []byte
	// Since is when the key was created. Pods created before Since+LegacyGrace that carry no
	// signature were enrolled by an earlier version and are trusted (see docs/webhooks.md).
	Since time.Time
}

// Sign returns the signature of a probe context: the annotation it is stored under and its
// value, bound to the pod's namespace and to the signing time (the pod's name and UID are not
// known yet during admission).
func Sign(key []byte, namespace, annotationKey, value string, issued time.Time) string {
	unix := issued.Unix()
	return version + "." + strconv.FormatInt(unix, 10) + "." +
		base64.RawURLEncoding.EncodeToString(mac(key, namespace, unix, annotationKey, value))
}

func mac(key []byte, namespace string, unix int64, annotationKey, value string) []byte {
	h := hmac.New(sha256.New, key)
	// NUL-separated: none of the parts but the value can contain NUL, and the value comes last.
	for _, part := range []string{domain, namespace, strconv.FormatInt(unix, 10), annotationKey, value} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// ErrNotSigned is wrapped by every verification failure, so callers can tell it from other errors.
var ErrNotSigned = errors.New("the probe context was not written by the operator's pod webhook")

// Verify checks the authoritative probe context of a pod against its signature annotation. A pod
// without a probe context passes (there is nothing to run). It returns nil when the signature
// verifies, or when the pod carries no signature and was created before k.Since+LegacyGrace.
func Verify(k Key, pod metav1.Object) error {
	ann := pod.GetAnnotations()
	ctxKey := probecontext.AnnotationKey(ann)
	if ctxKey == "" {
		return nil
	}
	created := pod.GetCreationTimestamp().Time
	sig, ok := ann[appsv1alpha1.AnnotationProbeContextSignature]
	if !ok {
		if created.Before(k.Since.Add(LegacyGrace)) {
			return nil
		}
		return fmt.Errorf("%w: it has no %s annotation, and the pod was created at %s, after the operator began signing probe contexts (%s)",
			ErrNotSigned, appsv1alpha1.AnnotationProbeContextSignature, stamp(created), stamp(k.Since))
	}
	parts := strings.Split(sig, ".")
	if len(parts) != 3 || parts[0] != version {
		return fmt.Errorf("%w: annotation %s is not a %s signature", ErrNotSigned, appsv1alpha1.AnnotationProbeContextSignature, version)
	}
	unix, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return fmt.Errorf("%w: annotation %s has no valid signing time", ErrNotSigned, appsv1alpha1.AnnotationProbeContextSignature)
	}
	got, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(got, mac(k.Bytes, pod.GetNamespace(), unix, ctxKey, ann[ctxKey])) {
		return fmt.Errorf("%w: its signature does not match the annotation %s of a pod in namespace %s",
			ErrNotSigned, ctxKey, pod.GetNamespace())
	}
	issued := time.Unix(unix, 0)
	if d := created.Sub(issued); d > MaxSkew || d < -MaxSkew {
		return fmt.Errorf("%w: it was signed at %s, but the pod was created at %s (a signature copied from another pod)",
			ErrNotSigned, stamp(issued), stamp(created))
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
