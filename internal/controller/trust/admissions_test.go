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
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestAdmissionsHolder(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	pod := func(name string, created time.Time, nonce string, issued time.Time) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(created), Annotations: map[string]string{
				appsv1alpha1.AnnotationProbeContextSignature: fmt.Sprintf("v2.k1.%d.%s.sig", issued.Unix(), nonce)}}}
	}
	orig := pod("orig", t0, "n1", t0)
	for _, tc := range []struct {
		name     string
		observed []*corev1.Pod
		now      time.Time
		nonce    string
		want     string // "" for none
	}{
		{"the original alone", []*corev1.Pod{orig}, t0, "n1", "ns/orig"},
		{"a copy created later", []*corev1.Pod{orig, pod("copy", t0.Add(time.Second), "n1", t0)}, t0, "n1", "ns/orig"},
		{"a copy created in the same second, delivered after", []*corev1.Pod{orig, pod("copy", t0, "n1", t0)}, t0, "n1", "ns/orig"},
		// A manager that starts lists the pods in name order, not creation order.
		{"a copy delivered first, created later", []*corev1.Pod{pod("a-copy", t0.Add(time.Second), "n1", t0), orig}, t0, "n1", "ns/orig"},
		{"the same pod twice", []*corev1.Pod{orig, orig}, t0, "n1", "ns/orig"},
		{"another nonce", []*corev1.Pod{orig, pod("other", t0, "n2", t0)}, t0, "n2", "ns/other"},
		{"a signature too old to be copied is not remembered", []*corev1.Pod{orig}, t0.Add(admissionMemory + time.Second), "n1", ""},
		{"no admission signature", []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "bare", UID: "u"}}}, t0, "", ""},
	} {
		var a admissions
		for _, p := range tc.observed {
			a.observe(p, tc.now)
		}
		h, ok := a.holder(tc.nonce)
		if got := map[bool]string{true: h.pod()}[ok]; got != tc.want {
			t.Errorf("%s: holder %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Nonces are forgotten once no copy of their signature can verify, so the memory holds only the
// admissions of the last admissionMemory.
func TestAdmissionsForgetOldNonces(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var a admissions
	for i := range 100 {
		a.observe(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint(i), UID: types.UID(fmt.Sprint(i)),
			CreationTimestamp: metav1.NewTime(t0), Annotations: map[string]string{
				appsv1alpha1.AnnotationProbeContextSignature: fmt.Sprintf("v2.k1.%d.n%d.sig", t0.Unix(), i)}}}, t0)
	}
	late := t0.Add(admissionMemory + 2*time.Minute)
	a.observe(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new", UID: "new",
		CreationTimestamp: metav1.NewTime(late), Annotations: map[string]string{
			appsv1alpha1.AnnotationProbeContextSignature: fmt.Sprintf("v2.k1.%d.fresh.sig", late.Unix())}}}, late)
	if len(a.byNonce) != 1 {
		t.Fatalf("%d nonces remembered, want only the fresh one", len(a.byNonce))
	}
}
