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
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/probesig"
)

// SigningKey is the probe-context signing key of the test suites. Signing began at the epoch, so
// no pod is trusted for being unsigned and old: only signatures count.
var SigningKey = probesig.Key{Bytes: []byte("enhanced-liveness-operator-test-signing-key"), Since: time.Unix(0, 0)}

// StaticKeys hands out SigningKey, like a loaded probesig.Store.
type StaticKeys struct{}

// Key returns SigningKey.
func (StaticKeys) Key() (probesig.Key, bool) { return SigningKey, true }

// Sign writes the signature the pod webhook writes for the pod's probe context, signed now:
// specs that create enrolled pods directly (no webhook) call it just before creating them.
func Sign(pod *corev1.Pod) *corev1.Pod {
	key := probecontext.AnnotationKey(pod.Annotations)
	if key == "" {
		return pod
	}
	pod.Annotations[appsv1alpha1.AnnotationProbeContextSignature] =
		probesig.Sign(SigningKey.Bytes, pod.Namespace, key, pod.Annotations[key], time.Now())
	return pod
}
