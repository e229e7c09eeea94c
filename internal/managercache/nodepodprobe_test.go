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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func nodePodProbe(path string) *appsv1alpha1.NodePodProbe {
	return &appsv1alpha1.NodePodProbe{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", Annotations: map[string]string{"team": "infra"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "manager"}}},
		Spec: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{{
			Name: "web-1", Namespace: "shop", UID: "u1", IP: "10.0.0.1",
			Probes: []appsv1alpha1.ContainerProbe{{Name: "web-1-app", ContainerName: "app", Probe: corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 5, TimeoutSeconds: 2, FailureThreshold: 4, InitialDelaySeconds: 3,
				TerminationGracePeriodSeconds: ptr.To[int64](7),
			}}},
		}}},
	}
}

func TestStripNodePodProbe(t *testing.T) {
	in := nodePodProbe("/healthz")
	want := PodProbesDigest(in.Spec.PodProbes)
	out, err := StripNodePodProbe(in)
	if err != nil {
		t.Fatal(err)
	}
	npp := out.(*appsv1alpha1.NodePodProbe)
	p := npp.Spec.PodProbes[0].Probes[0]
	if p.Probe.HTTPGet != nil || npp.ManagedFields != nil {
		t.Errorf("handler or managedFields kept: %+v %v", p.Probe.ProbeHandler, npp.ManagedFields)
	}
	if p.Name != "web-1-app" || p.ContainerName != "app" || p.Probe.PeriodSeconds != 5 || p.Probe.TimeoutSeconds != 2 ||
		p.Probe.FailureThreshold != 4 || p.Probe.InitialDelaySeconds != 3 || *p.Probe.TerminationGracePeriodSeconds != 7 {
		t.Errorf("what the decision reads was not kept: %+v", p)
	}
	if pp := npp.Spec.PodProbes[0]; pp.Name != "web-1" || pp.Namespace != "shop" || pp.UID != "u1" || pp.IP != "10.0.0.1" {
		t.Errorf("pod identity not kept: %+v", pp)
	}
	if got := SpecDigest(npp); got != want || want == "" {
		t.Errorf("SpecDigest of the stripped copy = %q, want the digest of the spec sent %q", got, want)
	}
	if npp.Annotations["team"] != "infra" {
		t.Errorf("annotations of the object lost: %v", npp.Annotations)
	}
	// Applied again (an informer may): nothing changes, the digest stays that of the spec sent.
	again, _ := StripNodePodProbe(npp)
	if got := SpecDigest(again.(*appsv1alpha1.NodePodProbe)); got != want {
		t.Errorf("SpecDigest after a second transform = %q, want %q", got, want)
	}
}

func TestSpecDigest(t *testing.T) {
	a, b := nodePodProbe("/healthz"), nodePodProbe("/livez")
	if PodProbesDigest(a.Spec.PodProbes) == PodProbesDigest(b.Spec.PodProbes) {
		t.Error("specs that differ only in a handler have the same digest")
	}
	if PodProbesDigest(nil) != PodProbesDigest([]appsv1alpha1.PodProbe{}) {
		t.Error("nil and empty pod probes differ")
	}
	// Not stripped (--strip-cached-objects=false, or read from the API server): the spec itself
	// counts, and an annotation of that name set on the server is not believed.
	forged := nodePodProbe("/healthz")
	forged.Annotations[annotationSpecDigest] = PodProbesDigest(b.Spec.PodProbes)
	if got := SpecDigest(forged); got != PodProbesDigest(a.Spec.PodProbes) {
		t.Errorf("SpecDigest of an unstripped copy = %q, want the digest of its spec", got)
	}
	// Stripped with such an annotation from the server: the transform records the real digest.
	out, _ := StripNodePodProbe(forged)
	if got := SpecDigest(out.(*appsv1alpha1.NodePodProbe)); got != PodProbesDigest(a.Spec.PodProbes) {
		t.Errorf("SpecDigest after stripping a copy with a forged digest = %q", got)
	}
	empty := &appsv1alpha1.NodePodProbe{}
	if _, err := StripNodePodProbe(empty); err != nil || SpecDigest(empty) != "" {
		t.Errorf("empty NodePodProbe: err %v, digest %q", err, SpecDigest(empty))
	}
	if out, _ := StripNodePodProbe(&corev1.Pod{}); out == nil {
		t.Error("another type was not passed through")
	}
}
