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
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

const (
	// admissionVersion prefixes an admission signature.
	admissionVersion = "v2"
	admissionDomain  = "enhancedliveness.io/probe-context-admission/v2"
	nonceBytes       = 12

	// MaxSkew bounds the distance between the admission time and the pod's creationTimestamp. The
	// webhook signs during admission, a moment before the apiserver stamps the pod, on the
	// apiserver's clock as the manager measures it (internal/manager/apiclock: to within a second or
	// so), so the two times are on one clock; the margin covers the other webhooks of the request. A
	// signature copied onto a pod created later than that does not verify.
	MaxSkew = 5 * time.Minute
)

// Admission is what the pod webhook signs: the probe context as admitted, where and when.
type Admission struct {
	// Namespace, Name and GenerateName of the pod being admitted (Name is empty for a pod named
	// by the apiserver from GenerateName).
	Namespace, Name, GenerateName string
	// AnnotationKey is the probe-context annotation (ours or OpenKruise's), Value its exact value.
	AnnotationKey, Value string
	Issued               time.Time
}

// SignAdmission returns the admission signature of a: v2.<key ID>.<unix time>.<nonce>.<signature>.
// The random nonce makes every admission's signature unique, so that the manager can refuse a
// signature found on two pods.
func SignAdmission(kp KeyPair, a Admission) string {
	nonce := make([]byte, nonceBytes)
	_, _ = rand.Read(nonce) // never fails: crypto/rand crashes the program rather than return an error
	n := base64.RawURLEncoding.EncodeToString(nonce)
	unix := strconv.FormatInt(a.Issued.Unix(), 10)
	msg := message(admissionDomain, a.Namespace, a.Name, a.GenerateName, unix, n, a.AnnotationKey, a.Value)
	return strings.Join([]string{admissionVersion, kp.ID, unix, n, sign(kp, msg)}, ".")
}

// Admitted is a verified admission signature.
type Admitted struct {
	KeyID  string
	Issued time.Time
}

// AdmissionKeyID returns the key ID an admission signature names, "" when the pod has none (or
// something else in the annotation).
func AdmissionKeyID(pod metav1.Object) string { return admissionPart(pod, 1) }

// AdmissionNonce returns the nonce of the pod's admission signature, "" when it has none: the
// webhook draws one per admission, so two pods with one nonce share a copied signature.
func AdmissionNonce(pod metav1.Object) string { return admissionPart(pod, 3) }

// AdmissionIssued returns when the pod's admission signature says it was issued, unverified;
// false when it has none or the time does not parse.
func AdmissionIssued(pod metav1.Object) (time.Time, bool) {
	unix, err := strconv.ParseInt(admissionPart(pod, 2), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(unix, 0), true
}

func admissionPart(pod metav1.Object, i int) string {
	parts := strings.Split(pod.GetAnnotations()[appsv1alpha1.AnnotationProbeContextSignature], ".")
	if len(parts) != 5 || parts[0] != admissionVersion {
		return ""
	}
	return parts[i]
}

// VerifyAdmission checks the pod's admission signature against its authoritative probe context,
// namespace, name and creation time.
func VerifyAdmission(keys KeySet, pod metav1.Object) (Admitted, error) {
	ann := pod.GetAnnotations()
	ctxKey := probecontext.AnnotationKey(ann)
	if ctxKey == "" {
		return Admitted{}, fmt.Errorf("%w: the pod has no probe-context annotation", ErrNotSigned)
	}
	sig, ok := ann[appsv1alpha1.AnnotationProbeContextSignature]
	if !ok {
		return Admitted{}, fmt.Errorf("%w: it has no %s annotation (the pod was created while the webhook did not answer, "+
			"or around it)", ErrNotSigned, appsv1alpha1.AnnotationProbeContextSignature)
	}
	parts := strings.Split(sig, ".")
	if len(parts) != 5 || parts[0] != admissionVersion {
		return Admitted{}, fmt.Errorf("%w: annotation %s is not a %s signature", ErrNotSigned,
			appsv1alpha1.AnnotationProbeContextSignature, admissionVersion)
	}
	id, unixStr, nonce, mac := parts[1], parts[2], parts[3], parts[4]
	unix, err := strconv.ParseInt(unixStr, 10, 64)
	if err != nil {
		return Admitted{}, fmt.Errorf("%w: annotation %s has no valid signing time", ErrNotSigned, appsv1alpha1.AnnotationProbeContextSignature)
	}
	// A pod named from generateName was admitted without its name.
	names := [][2]string{{pod.GetName(), pod.GetGenerateName()}}
	if g := pod.GetGenerateName(); g != "" && strings.HasPrefix(pod.GetName(), g) {
		names = append(names, [2]string{"", g})
	}
	err = errMismatch
	for _, n := range names {
		msg := message(admissionDomain, pod.GetNamespace(), n[0], n[1], unixStr, nonce, ctxKey, ann[ctxKey])
		if err = keys.verify(id, msg, mac); err != errMismatch {
			break
		}
	}
	switch {
	case err == errMismatch:
		return Admitted{}, fmt.Errorf("%w: its admission signature does not match the annotation %s of pod %s/%s",
			ErrNotSigned, ctxKey, pod.GetNamespace(), pod.GetName())
	case err != nil:
		return Admitted{}, err
	}
	issued := time.Unix(unix, 0)
	created := pod.GetCreationTimestamp().Time
	if d := created.Sub(issued); d > MaxSkew || d < -MaxSkew {
		return Admitted{}, fmt.Errorf("%w: it was admitted at %s, but the pod was created at %s (a signature copied from another pod)",
			ErrNotSigned, stamp.Seconds(issued), stamp.Seconds(created))
	}
	return Admitted{KeyID: id, Issued: issued}, nil
}
