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

// Package gate is the node daemon's side of the trust boundary: before it runs anything, it
// checks every probe of its NodePodProbe against the pod's own probe-context annotation and the
// seal the manager wrote on the pod (internal/trust/signature), with public keys only. The NodePodProbe
// spec is a cluster-scoped object that more than the manager may be able to write; the pod's
// sealed annotation is what its creator had admitted, for that very pod.
package gate

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// Causes of a refusal: the label of the daemon's metrics.
const (
	// CausePodNotFound: the daemon's cache has no pod with the entry's UID (yet). Pending.
	CausePodNotFound = "pod-not-found"
	// CauseAwaitingSeal: the pod was admitted (it carries an admission signature) and the
	// manager has not sealed it yet. Pending.
	CauseAwaitingSeal = "awaiting-seal"
	// CauseUnknownKey: the seal names a key the daemon does not hold. Pending for a while (a
	// rotation publishes the key a moment before it seals with it), then refused.
	CauseUnknownKey = "unknown-key"
	// CauseNotSigned: the pod carries neither a seal nor an admission signature.
	CauseNotSigned = "not-signed"
	// CauseBadSeal: the seal does not verify for this pod and its probe context.
	CauseBadSeal = "bad-seal"
	// CauseWrongPod: the entry names another pod, or another address, than the pod with its UID.
	CauseWrongPod = "wrong-pod"
	// CauseMismatch: the probe is not what the pod's probe context says.
	CauseMismatch = "mismatch"
)

// Verdict says why a probe is not run.
type Verdict struct {
	// Pending is true while the probe may yet be accepted without the NodePodProbe changing.
	Pending bool
	Cause   string
	Message string
}

// Refusal is a probe of an entry that is not run ("" Probe: the whole entry).
type Refusal struct {
	Probe     string
	Container string
	Verdict
}

// Check returns the probes of one NodePodProbe entry that match the pod's sealed probe context,
// and why each of the others is not run. pod is the daemon's cached pod with the entry's UID (nil
// when it has none).
func Check(pp *appsv1alpha1.PodProbe, pod *corev1.Pod, keys signature.KeySet) ([]appsv1alpha1.ContainerProbe, []Refusal) {
	return check(pp, pod, func(p *corev1.Pod) error { _, err := signature.VerifySeal(keys, p); return err }, decode)
}

func decode(pod *corev1.Pod) (probecontext.Context, error) {
	pctx, errs := probecontext.FromAnnotations(pod.Annotations)
	return pctx, errs.ToAggregate()
}

// check is Check with the seal verification and the decoding of the probe context given (the
// Gate remembers both for a pod's exact seal and context).
func check(pp *appsv1alpha1.PodProbe, pod *corev1.Pod, verify func(*corev1.Pod) error,
	decode func(*corev1.Pod) (probecontext.Context, error)) ([]appsv1alpha1.ContainerProbe, []Refusal) {
	whole := func(v Verdict) ([]appsv1alpha1.ContainerProbe, []Refusal) { return nil, []Refusal{{Verdict: v}} }
	if pod == nil {
		return whole(Verdict{Pending: true, Cause: CausePodNotFound,
			Message: fmt.Sprintf("no pod with UID %s on this node (yet)", pp.UID)})
	}
	if pod.Namespace != pp.Namespace || pod.Name != pp.Name {
		return whole(Verdict{Cause: CauseWrongPod, Message: fmt.Sprintf(
			"the NodePodProbe entry names pod %s/%s, but UID %s is pod %s/%s", pp.Namespace, pp.Name, pp.UID, pod.Namespace, pod.Name)})
	}
	if ips := podIPs(pod); len(ips) == 0 {
		return whole(Verdict{Pending: true, Cause: CausePodNotFound, Message: "the pod has no IP yet"})
	} else if !slices.Contains(ips, pp.IP) {
		return whole(Verdict{Cause: CauseWrongPod, Message: fmt.Sprintf(
			"the NodePodProbe entry aims at address %q, which is not the pod's (%v)", pp.IP, ips)})
	}
	if v, ok := checkSeal(verify(pod), pod); !ok {
		return whole(v)
	}
	pctx, err := decode(pod)
	if err != nil { // sealed, so admitted: cannot happen short of a different decoder
		return whole(Verdict{Cause: CauseMismatch, Message: "the pod's probe context does not decode: " + err.Error()})
	}
	var accepted []appsv1alpha1.ContainerProbe
	var refused []Refusal
	for _, p := range pp.Probes {
		if msg := matches(pod, pctx, &p); msg != "" {
			refused = append(refused, Refusal{Probe: p.Name, Container: p.ContainerName,
				Verdict: Verdict{Cause: CauseMismatch, Message: msg}})
			continue
		}
		accepted = append(accepted, p)
	}
	return accepted, refused
}

// checkSeal turns the verification of the pod's seal into a verdict.
func checkSeal(err error, pod *corev1.Pod) (Verdict, bool) {
	if err == nil {
		return Verdict{}, true
	}
	_, sealed := pod.Annotations[appsv1alpha1.AnnotationProbeContextSeal]
	_, admitted := pod.Annotations[appsv1alpha1.AnnotationProbeContextSignature]
	switch {
	case errors.Is(err, signature.ErrUnknownKey):
		return Verdict{Pending: true, Cause: CauseUnknownKey, Message: err.Error()}, false
	case !sealed && admitted:
		return Verdict{Pending: true, Cause: CauseAwaitingSeal, Message: "the manager has not sealed the pod's probe context yet"}, false
	case !sealed:
		return Verdict{Cause: CauseNotSigned, Message: "the pod's probe context was not admitted by the operator's pod webhook " +
			"(no signature, no seal)"}, false
	}
	return Verdict{Cause: CauseBadSeal, Message: err.Error()}, false
}

// matches returns "" when p is the probe the pod's context gives its container, else why not.
func matches(pod *corev1.Pod, pctx probecontext.Context, p *appsv1alpha1.ContainerProbe) string {
	e := pctx.Lookup(p.ContainerName)
	if e == nil {
		return fmt.Sprintf("the pod's probe context has no liveness probe for container %q", p.ContainerName)
	}
	pc, ok := podutil.FindRestartable(&pod.Spec, p.ContainerName)
	if !ok || !podutil.RestartedAfterStop(&pod.Spec, pc) {
		return fmt.Sprintf("container %q of the pod is not one the operator probes", p.ContainerName)
	}
	if want := probecontext.ProbeName(pod.Name, p.ContainerName); p.Name != want {
		return fmt.Sprintf("the probe is named %q, not %q", p.Name, want)
	}
	want, err := probecontext.Resolve(e.LivenessProbe, pc.Container)
	if err != nil {
		return err.Error()
	}
	got := p.Probe.DeepCopy()
	probecontext.SetDefaults(got)
	if !equality.Semantic.DeepEqual(got, want) {
		return fmt.Sprintf("the probe of container %q differs from the one in the pod's probe context", p.ContainerName)
	}
	return ""
}

func podIPs(pod *corev1.Pod) []string {
	var out []string
	for _, ip := range pod.Status.PodIPs {
		out = append(out, ip.IP)
	}
	if pod.Status.PodIP != "" && !slices.Contains(out, pod.Status.PodIP) {
		out = append(out, pod.Status.PodIP)
	}
	return out
}
