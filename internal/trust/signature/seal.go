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
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

const (
	sealVersion = "v1"
	sealDomain  = "enhancedliveness.io/probe-context-seal/v1"
)

// Seal returns the seal of the pod's authoritative probe context: v1.<key ID>.<signature> over
// the context's annotation key and value and the pod's UID, namespace and name. The pod must
// exist (have a UID); callers verified how its probe context was admitted.
func Seal(kp KeyPair, pod metav1.Object) (string, error) {
	ann := pod.GetAnnotations()
	ctxKey := probecontext.AnnotationKey(ann)
	if ctxKey == "" || pod.GetUID() == "" {
		return "", fmt.Errorf("pod %s/%s: only an existing pod with a probe context can be sealed", pod.GetNamespace(), pod.GetName())
	}
	return sealVersion + "." + kp.ID + "." + sign(kp, sealMessage(pod, ctxKey)), nil
}

func sealMessage(pod metav1.Object, ctxKey string) []byte {
	return message(sealDomain, string(pod.GetUID()), pod.GetNamespace(), pod.GetName(), ctxKey, pod.GetAnnotations()[ctxKey])
}

// SealKeyID returns the key ID the pod's seal names; "" when it has none.
func SealKeyID(pod metav1.Object) string {
	parts := strings.Split(pod.GetAnnotations()[appsv1alpha1.AnnotationProbeContextSeal], ".")
	if len(parts) != 3 || parts[0] != sealVersion {
		return ""
	}
	return parts[1]
}

// VerifySeal checks the pod's seal against its authoritative probe context and its identity, and
// returns the ID of the key that made it.
func VerifySeal(keys KeySet, pod metav1.Object) (string, error) {
	ann := pod.GetAnnotations()
	ctxKey := probecontext.AnnotationKey(ann)
	if ctxKey == "" {
		return "", fmt.Errorf("%w: the pod has no probe-context annotation", ErrNotSigned)
	}
	seal, ok := ann[appsv1alpha1.AnnotationProbeContextSeal]
	if !ok {
		return "", fmt.Errorf("%w: it has no %s annotation", ErrNotSigned, appsv1alpha1.AnnotationProbeContextSeal)
	}
	parts := strings.Split(seal, ".")
	if len(parts) != 3 || parts[0] != sealVersion {
		return "", fmt.Errorf("%w: annotation %s is not a %s seal", ErrNotSigned, appsv1alpha1.AnnotationProbeContextSeal, sealVersion)
	}
	switch err := keys.verify(parts[1], sealMessage(pod, ctxKey), parts[2]); {
	case err == errMismatch:
		return "", fmt.Errorf("%w: its seal does not match the annotation %s of pod %s/%s (UID %s)",
			ErrNotSigned, ctxKey, pod.GetNamespace(), pod.GetName(), pod.GetUID())
	case err != nil:
		return "", err
	}
	return parts[1], nil
}
