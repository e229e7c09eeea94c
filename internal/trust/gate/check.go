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

// Package gate is the node daemon's side of the trust boundary: the node's NodePodProbe names
// pods, and the daemon takes each named pod's probes from the pod's own probe-context annotation,
// only once the seal the manager wrote on the pod verifies (internal/trust/signature), with
// public keys only. The NodePodProbe is a cluster-scoped object that more than the manager may be
// able to write: what it can change is which of the node's sealed pods are probed, never what a
// probe runs or where.
package gate

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
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
	// CauseWrongPod: the entry names another pod than the pod with its UID.
	CauseWrongPod = "wrong-pod"
	// CauseUndecodable: the sealed probe context does not decode (only a daemon older than the
	// webhook that admitted it could find that).
	CauseUndecodable = "undecodable"
)

// Verdict says why the probes of an entry are not run.
type Verdict struct {
	// Pending is true while the probes may yet be run without the NodePodProbe changing.
	Pending bool
	Cause   string
	Message string
}

// Check returns the probes the pod's sealed probe context gives the pod a NodePodProbe entry
// names (probecontext.ProbesOf: the containers the operator probes, named ports resolved), or
// why none is run. pod is the daemon's cached pod with the entry's UID (nil when it has none).
// Its status.podIP is not waited for: an exec probe needs no address, and the others dial the
// address the container runtime gives the pod's sandbox, which the worker asks for once the
// container runs (a status.podIP not written yet, or blanked by a pods/status writer, stops nothing).
func Check(pp *appsv1alpha1.PodProbe, pod *corev1.Pod, keys signature.KeySet) ([]probecontext.Probe, *Verdict) {
	return check(pp, pod, func(p *corev1.Pod) error { _, err := signature.VerifySeal(keys, p); return err }, decode)
}

func decode(pod *corev1.Pod) (probecontext.Context, error) {
	pctx, errs := probecontext.FromAnnotations(pod.Annotations)
	return pctx, errs.ToAggregate()
}

// check is Check with the seal verification and the decoding of the probe context given (the
// Gate remembers both for a pod's exact seal and context).
func check(pp *appsv1alpha1.PodProbe, pod *corev1.Pod, verify func(*corev1.Pod) error,
	decode func(*corev1.Pod) (probecontext.Context, error)) ([]probecontext.Probe, *Verdict) {
	if pod == nil {
		return nil, &Verdict{Pending: true, Cause: CausePodNotFound,
			Message: fmt.Sprintf("no pod with UID %s on this node (yet)", pp.UID)}
	}
	if pod.Namespace != pp.Namespace || pod.Name != pp.Name {
		return nil, &Verdict{Cause: CauseWrongPod, Message: fmt.Sprintf(
			"the NodePodProbe entry names pod %s/%s, but UID %s is pod %s/%s", pp.Namespace, pp.Name, pp.UID, pod.Namespace, pod.Name)}
	}
	if v, ok := checkSeal(verify(pod), pod); !ok {
		return nil, &v
	}
	pctx, err := decode(pod)
	if err != nil { // sealed, so admitted: cannot happen short of a different decoder
		return nil, &Verdict{Cause: CauseUndecodable, Message: "the pod's probe context does not decode: " + err.Error()}
	}
	// The context's entries that give no probe are the mapping controller's to report.
	probes, _ := probecontext.ProbesOf(pod, pctx)
	return probes, nil
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
