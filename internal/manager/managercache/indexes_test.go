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

package managercache

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestTrustKeyID(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        []string
	}{
		{"sealed: the seal's key", map[string]string{
			appsv1alpha1.AnnotationProbeContextSeal:      "v1.k2.sig",
			appsv1alpha1.AnnotationProbeContextSignature: "v2.k1.issued.nonce.sig"}, []string{"k2"}},
		{"admitted, not sealed yet: the admission's key", map[string]string{
			appsv1alpha1.AnnotationProbeContextSignature: "v2.k1.issued.nonce.sig"}, []string{"k1"}},
		{"a damaged seal: the admission's key", map[string]string{
			appsv1alpha1.AnnotationProbeContextSeal:      "k2",
			appsv1alpha1.AnnotationProbeContextSignature: "v2.k1.issued.nonce.sig"}, []string{"k1"}},
		{"neither", map[string]string{"team": "a"}, nil},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: tc.annotations}}
		if got := TrustKeyID(pod); !slices.Equal(got, tc.want) {
			t.Errorf("%s: TrustKeyID = %v, want %v", tc.name, got, tc.want)
		}
	}
}
