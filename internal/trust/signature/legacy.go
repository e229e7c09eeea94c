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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// The first release's admission signature: v1.<unix time>.<base64url HMAC-SHA256> over the
// namespace, the signing time and the probe context, with a symmetric key. Only the manager
// verifies it, to seal the pods that release admitted; nothing signs it any more.
const (
	legacyVersion = "v1"
	legacyDomain  = "enhancedliveness.io/probe-context-signature/v1"

	// MinLegacyKeyBytes is the shortest HMAC key the first release generated.
	MinLegacyKeyBytes = 32
)

// IsLegacy reports whether the pod's admission signature is of the first release's kind.
func IsLegacy(pod metav1.Object) bool {
	return strings.HasPrefix(pod.GetAnnotations()[appsv1alpha1.AnnotationProbeContextSignature], legacyVersion+".")
}

// VerifyLegacy checks a first-release signature with that release's key. Unlike that release,
// a pod without a signature is never accepted, whenever it was created.
func VerifyLegacy(key []byte, pod metav1.Object) error {
	ann := pod.GetAnnotations()
	ctxKey := probecontext.AnnotationKey(ann)
	if ctxKey == "" {
		return fmt.Errorf("%w: the pod has no probe-context annotation", ErrNotSigned)
	}
	parts := strings.Split(ann[appsv1alpha1.AnnotationProbeContextSignature], ".")
	if len(parts) != 3 || parts[0] != legacyVersion {
		return fmt.Errorf("%w: annotation %s is not a %s signature", ErrNotSigned, appsv1alpha1.AnnotationProbeContextSignature, legacyVersion)
	}
	unix, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return fmt.Errorf("%w: annotation %s has no valid signing time", ErrNotSigned, appsv1alpha1.AnnotationProbeContextSignature)
	}
	got, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(key) < MinLegacyKeyBytes || !hmac.Equal(got, legacyMAC(key, pod.GetNamespace(), parts[1], ctxKey, ann[ctxKey])) {
		return fmt.Errorf("%w: its %s signature does not match the annotation %s of a pod in namespace %s",
			ErrNotSigned, legacyVersion, ctxKey, pod.GetNamespace())
	}
	issued := time.Unix(unix, 0)
	created := pod.GetCreationTimestamp().Time
	if d := created.Sub(issued); d > MaxSkew || d < -MaxSkew {
		return fmt.Errorf("%w: it was signed at %s, but the pod was created at %s (a signature copied from another pod)",
			ErrNotSigned, stamp(issued), stamp(created))
	}
	return nil
}

func legacyMAC(key []byte, namespace, unix, ctxKey, value string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(message(legacyDomain, namespace, unix, ctxKey, value))
	return h.Sum(nil)
}

// SignLegacy makes a first-release signature. Nothing in the operator calls it: tests use it to
// make the pods an upgrade finds.
func SignLegacy(key []byte, namespace, ctxKey, value string, issued time.Time) string {
	unix := strconv.FormatInt(issued.Unix(), 10)
	return legacyVersion + "." + unix + "." + base64.RawURLEncoding.EncodeToString(legacyMAC(key, namespace, unix, ctxKey, value))
}
