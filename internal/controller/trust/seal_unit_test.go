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

package trust

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	eltestutil "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// An admission signature is sealed onto one pod only: a copy on a pod created later is refused
// while the original exists, and after it is gone too (the controller remembers admissions for
// three times MaxSkew, longer than a copy can verify), and so is a copy created within the
// original's second.
func TestAdmissionSignatureIsSingleUse(t *testing.T) {
	now := time.Now()
	at := func(name string, uid string, created time.Time) *corev1.Pod {
		p := eltestutil.NewPod("ns", name).Enrolled().Containers("web").
			Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: webContext}).Build()
		p.GenerateName, p.UID, p.CreationTimestamp = "web-", types.UID("uid-"+uid), metav1.NewTime(created)
		return p
	}
	orig := at("", "a", now)
	eltestutil.Admit(orig) // admitted before the apiserver named it from generateName
	orig.Name = "web-aaaaa"
	copyOf := func(name, uid string) *corev1.Pod {
		p := at(name, uid, now.Add(time.Second))
		p.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = orig.Annotations[appsv1alpha1.AnnotationProbeContextSignature]
		return p
	}
	c := fake.NewClientBuilder().WithScheme(eltestutil.Scheme()).WithObjects(orig).Build()
	r := &SealReconciler{Client: c, Keys: staticKeys{}, Now: func() time.Time { return now }}
	keys := eltestutil.TrustedKeys()
	r.admissions.observe(orig, now) // the watch delivers the original first

	if err := r.admitted(keys, orig); err != nil {
		t.Fatalf("the original: %v", err)
	}
	if err := r.admitted(keys, copyOf("web-bbbbb", "b")); err == nil ||
		!strings.Contains(err.Error(), "was made for pod ns/web-aaaaa, which was created first") {
		t.Fatalf("a copy beside the original: %v", err)
	}
	if err := c.Delete(context.Background(), orig); err != nil {
		t.Fatal(err)
	}
	if err := r.admitted(keys, copyOf("web-ccccc", "c")); err == nil ||
		!strings.Contains(err.Error(), "was made for pod ns/web-aaaaa") {
		t.Fatalf("a copy after the original is gone: %v", err)
	}
	sameSecond := copyOf("web-ddddd", "0") // a UID that sorts first: creation order cannot tell them apart
	sameSecond.CreationTimestamp = orig.CreationTimestamp
	if err := r.admitted(keys, sameSecond); err == nil ||
		!strings.Contains(err.Error(), "was made for pod ns/web-aaaaa") {
		t.Fatalf("a copy created within the original's second: %v", err)
	}
	// The original itself, reconciled again, is still fine.
	if err := r.admitted(keys, orig); err != nil {
		t.Fatalf("the original again: %v", err)
	}
}
