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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// annotationSpecDigest carries, on a cached NodePodProbe only, the digest of the spec the API
// server sent (PodProbesDigest) before StripNodePodProbe dropped its probe handlers. It is
// never written: the mapping controller writes the spec with a merge patch computed between two
// copies that both carry it.
const annotationSpecDigest = "enhancedliveness.io/cached-spec-digest"

// StripNodePodProbe is the manager cache's transform for NodePodProbes. The manager reads of a
// node's spec the pods (name, namespace, UID), their probes' names, containers and timing
// (period, timeout, thresholds, grace); the handlers (the exec command, the HTTP path and
// headers, ports) only the node daemon runs. So the handlers are dropped, the strings the pods of
// a workload share are interned, and the digest of the whole spec stays in an annotation, for
// the mapping controller to tell whether the spec it wants is the one written (SpecDigest).
//
// The transform is idempotent: the API server accepts no probe without a handler (the CRD's
// rule), so a probe without one has been stripped already.
func StripNodePodProbe(obj any) (any, error) {
	npp, ok := obj.(*appsv1alpha1.NodePodProbe)
	if !ok || handlersStripped(npp) {
		return obj, nil
	}
	npp.ManagedFields = nil
	digest := PodProbesDigest(npp.Spec.PodProbes)
	annotations := make(map[string]string, len(npp.Annotations)+1)
	maps.Copy(annotations, npp.Annotations)
	annotations[annotationSpecDigest] = digest
	npp.Annotations = annotations
	for i := range npp.Spec.PodProbes {
		pp := &npp.Spec.PodProbes[i]
		pp.Namespace = strs.str(pp.Namespace)
		for j := range pp.Probes {
			p := &pp.Probes[j]
			p.ContainerName = strs.str(p.ContainerName)
			p.Probe.ProbeHandler = corev1.ProbeHandler{}
		}
	}
	return npp, nil
}

// SpecDigest returns the digest of a NodePodProbe's spec as the API server holds it: the one
// recorded by StripNodePodProbe when the handlers were dropped, else computed from the spec.
func SpecDigest(npp *appsv1alpha1.NodePodProbe) string {
	if d, ok := npp.Annotations[annotationSpecDigest]; ok && handlersStripped(npp) {
		return d
	}
	return PodProbesDigest(npp.Spec.PodProbes)
}

// PodProbesDigest is a digest of a spec's pod probes: equal specs have equal digests, and an
// empty list is the same whether nil or not.
func PodProbesDigest(pps []appsv1alpha1.PodProbe) string {
	if len(pps) == 0 {
		return ""
	}
	b, err := json.Marshal(pps)
	if err != nil {
		// Not reachable with these types; a digest no spec has makes the caller write.
		return "unencodable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// handlersStripped reports whether a NodePodProbe has a probe without a handler: one
// StripNodePodProbe has stripped.
func handlersStripped(npp *appsv1alpha1.NodePodProbe) bool {
	for i := range npp.Spec.PodProbes {
		for j := range npp.Spec.PodProbes[i].Probes {
			return npp.Spec.PodProbes[i].Probes[j].Probe.ProbeHandler == corev1.ProbeHandler{}
		}
	}
	return false
}
