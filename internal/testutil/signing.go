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

package testutil

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// SigningKey is the probe-context signing key of the test suites (a fixed seed).
var SigningKey = func() signature.KeyPair {
	kp, err := signature.KeyPairFromSeed([]byte("enhanced-liveness-test-seed-0032"))
	if err != nil {
		panic(err)
	}
	return kp
}()

// TrustedKeys is the key set that trusts SigningKey only.
func TrustedKeys() signature.KeySet { return signature.KeySet{}.With(SigningKey, time.Unix(0, 0)) }

// StaticKeys hands out SigningKey, like a loaded signature.Store, and trusts it, like a
// signature.Trust whose ConfigMap lists it.
type StaticKeys struct{}

// Current returns SigningKey.
func (StaticKeys) Current() (signature.KeyPair, bool) { return SigningKey, true }

// KeySet returns TrustedKeys.
func (StaticKeys) KeySet(context.Context) (signature.KeySet, bool, error) {
	return TrustedKeys(), true, nil
}

// Admit writes the admission signature the pod webhook writes for the pod's probe context, signed
// now: specs that create enrolled pods directly (no webhook) call it just before creating them.
func Admit(pod *corev1.Pod) *corev1.Pod {
	key := probecontext.AnnotationKey(pod.Annotations)
	if key == "" {
		return pod
	}
	pod.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = signature.SignAdmission(SigningKey, signature.Admission{
		Namespace: pod.Namespace, Name: pod.Name, GenerateName: pod.GenerateName,
		AnnotationKey: key, Value: pod.Annotations[key], Issued: time.Now()})
	return pod
}

// Seal writes the seal the manager writes on an existing pod (it needs the pod's UID) into its
// annotations; the caller writes the pod.
func Seal(pod *corev1.Pod) *corev1.Pod {
	s, err := signature.Seal(SigningKey, pod)
	if err != nil {
		panic(err)
	}
	pod.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = s
	return pod
}

// TrustConfigMap is the trust ConfigMap of namespace ns listing TrustedKeys.
func TrustConfigMap(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: signature.TrustConfigMapName},
		Data: signature.EncodeKeySet(TrustedKeys())}
}
