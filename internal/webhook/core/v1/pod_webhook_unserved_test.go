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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// createNode creates a node with these labels (deleted after the spec).
func createNode(name string, labels map[string]string) {
	GinkgoHelper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	Expect(k8sClient.Create(ctx, n)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, n))).To(Succeed()) })
}

// The webhook moves a pod's liveness probe to the operator's node daemon: a pod it can tell no
// daemon will serve keeps its native probe, with a warning that says why, or it would have none.
var _ = Describe("Pod webhook and pods no node daemon will serve", func() {
	const ns = "pods-unserved"
	BeforeEach(func() { ensureNamespace(ns) })

	It("leaves a pod selecting Windows nodes native, and warns why", func() {
		c, warnings := warningClient()
		pod := appPod(ns, "win-selector", optIn())
		pod.Spec.NodeSelector = map[string]string{corev1.LabelOSStable: "windows"}
		Expect(c.Create(ctx, pod)).To(Succeed())
		expectNative(pod)
		Expect(pod.Spec.InitContainers[1].LivenessProbe).NotTo(BeNil())
		Expect(warnings.take()).To(ContainElement("not enrolled in enhanced liveness: no node daemon of the operator will probe " +
			"the pod: its nodeSelector kubernetes.io/os=windows excludes every node the operator's node daemon runs on " +
			"(kubernetes.io/os=linux); every container keeps its native livenessProbe"))
	})

	It("leaves a Windows pod (spec.os.name) native, and warns why", func() {
		c, warnings := warningClient()
		pod := appPod(ns, "win-os", optIn())
		pod.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
		Expect(c.Create(ctx, pod)).To(Succeed())
		expectNative(pod)
		Expect(pod.Spec.InitContainers[1].LivenessProbe).NotTo(BeNil())
		Expect(warnings.take()).To(ContainElement("not enrolled in enhanced liveness: no node daemon of the operator will probe " +
			"the pod: its spec.os.name windows excludes every node the operator's node daemon runs on " +
			"(kubernetes.io/os=linux); every container keeps its native livenessProbe"))

		By("a Linux pod that says so is enrolled")
		linux := appPod(ns, "linux-os", optIn())
		linux.Spec.OS = &corev1.PodOS{Name: corev1.Linux}
		Expect(c.Create(ctx, linux)).To(Succeed())
		expectEnrolled(linux)
		Expect(warnings.take()).NotTo(ContainElement(ContainSubstring("enhanced liveness")))
	})

	It("leaves a pod whose required node affinity excludes Linux nodes native", func() {
		c, warnings := warningClient()
		pod := appPod(ns, "win-affinity", optIn())
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"windows"}}}}}}}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		expectNative(pod)
		Expect(warnings.take()).To(ContainElement(ContainSubstring("its required node affinity excludes every node the operator's node daemon runs on")))
	})

	It("leaves a pod bound at creation to a node the daemon does not run on native, and enrolls one bound to a Linux node", func() {
		createNode("win-1", map[string]string{corev1.LabelOSStable: "windows"})
		createNode("linux-1", map[string]string{corev1.LabelOSStable: "linux"})
		c, warnings := warningClient()
		win := appPod(ns, "on-win-1", optIn())
		win.Spec.NodeName = "win-1"
		Eventually(func(g Gomega) {
			// The webhook reads nodes from the manager's cache, which may not hold the new one yet.
			w := win.DeepCopy()
			w.Name = ""
			w.GenerateName = "on-win-1-"
			g.Expect(c.Create(ctx, w)).To(Succeed())
			g.Expect(w.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))
			win = w
		}).Should(Succeed())
		expectNative(win)
		Expect(warnings.take()).To(ContainElement(ContainSubstring("its nodeName win-1 is a node the operator's node daemon " +
			"does not run on (its labels do not match kubernetes.io/os=linux)")))

		linux := appPod(ns, "on-linux-1", optIn())
		linux.Spec.NodeName = "linux-1"
		Expect(c.Create(ctx, linux)).To(Succeed())
		Expect(linux.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, appsv1alpha1.TrueValue))
		Expect(warnings.take()).NotTo(ContainElement(ContainSubstring("enhanced liveness")))
	})
})
