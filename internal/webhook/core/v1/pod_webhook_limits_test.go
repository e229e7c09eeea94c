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

package v1

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// widePod has n containers, each with a TCP liveness probe.
func widePod(ns, name string, n int) *corev1.Pod {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
	}
	b := testutil.NewPod(ns, name).Annotations(optIn()).Containers(names...)
	for _, c := range names {
		b = b.LivenessProbe(c, &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}})
	}
	return b.Build()
}

func expectNative(pod *corev1.Pod) {
	GinkgoHelper()
	for _, c := range pod.Spec.Containers {
		Expect(c.LivenessProbe).NotTo(BeNil(), "container %s keeps its native probe", c.Name)
	}
	Expect(pod.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))
	Expect(pod.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContext))
	Expect(pod.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContextSignature))
}

var _ = Describe("Pod webhook and the limits of the NodePodProbe schema", func() {
	const ns = "pods-limits"
	BeforeEach(func() { ensureNamespace(ns) })

	It("leaves a pod with more probes than a NodePodProbe entry holds native, and warns naming the limit", func() {
		c, warnings := warningClient()
		pod := widePod(ns, "wide", appsv1alpha1.MaxProbesPerPod+1)
		Expect(c.Create(ctx, pod)).To(Succeed())
		expectNative(pod)
		Expect(warnings.take()).To(ContainElement("not enrolled in enhanced liveness: the pod has 65 liveness probes and " +
			"a NodePodProbe holds at most 64 per pod (spec.podProbes[].probes: maxItems 64); every container keeps its " +
			"native livenessProbe"))
	})

	It("enrolls a pod with exactly as many probes as the limit", func() {
		pod := widePod(ns, "wide-enough", appsv1alpha1.MaxProbesPerPod)
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
		Expect(contextOf(pod)).To(HaveLen(appsv1alpha1.MaxProbesPerPod))
	})

	It("denies probes written into the annotation that would exceed the limit: they have no native probe to keep", func() {
		pod := widePod(ns, "wide-written", appsv1alpha1.MaxProbesPerPod)
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "extra", Image: "registry.example/extra:1"})
		pod.Annotations[appsv1alpha1.AnnotationProbeContext] = `[{"name":"extra","livenessProbe":{"tcpSocket":{"port":9090}}}]`
		err := k8sClient.Create(ctx, pod)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(`metadata.annotations[` + appsv1alpha1.AnnotationProbeContext +
			`]: Too many: 65: must have at most 64 items`))
	})

	It("enrolls the container with the longest probe name the API allows (317 bytes), without a warning", func() {
		c, warnings := warningClient()
		long := strings.Repeat("c", 63)
		name := strings.Repeat("p", 253)
		pod := testutil.NewPod(ns, name).Annotations(optIn()).Containers("web", long).
			LivenessProbe("web", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}).
			LivenessProbe(long, &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(81)}}}).
			Build()
		Expect(c.Create(ctx, pod)).To(Succeed())
		Expect(pod.Spec.Containers[0].LivenessProbe).To(BeNil())
		Expect(pod.Spec.Containers[1].LivenessProbe).To(BeNil())
		Expect(contextOf(pod)).To(HaveLen(2))
		Expect(name + "-" + long).To(HaveLen(appsv1alpha1.MaxProbeNameLength))
		// The API server's own warning about a pod name longer than a DNS label stays.
		Expect(warnings.take()).NotTo(ContainElement(ContainSubstring("enhanced liveness")))
	})

	It("leaves a pod whose probes are too large for the probe context native, and warns", func() {
		c, warnings := warningClient()
		pod := testutil.NewPod(ns, "huge").Annotations(optIn()).Containers("web").
			LivenessProbe("web", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
				Command: []string{"/bin/check", strings.Repeat("x", 70*1024)}}}}).Build()
		Expect(c.Create(ctx, pod)).To(Succeed())
		expectNative(pod)
		Expect(warnings.take()).To(ContainElement(ContainSubstring("not enrolled in enhanced liveness: the pod's liveness " +
			"probes take more than 65536 bytes")))
	})

	It("does not enroll the mirror pod of a static pod", func() {
		c, warnings := warningClient()
		pod := appPod(ns, "static-node1", optIn())
		pod.Annotations[corev1.MirrorPodAnnotationKey] = "a1b2c3"
		pod.Spec.NodeName = "node1"
		Expect(c.Create(ctx, pod)).To(Succeed())
		Expect(pod.Spec.InitContainers[1].LivenessProbe).NotTo(BeNil())
		expectNative(pod)
		Expect(warnings.take()).To(ContainElement(ContainSubstring("not enrolled in enhanced liveness: a mirror pod")))
	})
})
