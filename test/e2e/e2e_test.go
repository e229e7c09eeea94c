//go:build e2e

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

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// Scenarios 1, 2 and 7 of the e2e issue: the operator restarts containers, the kubelet does not.

// expectRestartedByOperator waits for the pod's app container to be restarted once through a
// CRR and checks who did it: a Succeeded CRR, the daemon's Killing event, no kubelet probe.
func expectRestartedByOperator(ns string, pod corev1.Pod) {
	before := containerStatus(&pod, appContainer)
	By("waiting for the container to be restarted (restartCount +1)")
	Eventually(restartCount(ns, pod.Name)).WithTimeout(90 * time.Second).Should(BeNumerically(">=", before.RestartCount+1))

	By("the restart went through a ContainerRecreateRequest that Succeeded")
	Eventually(func(g Gomega) {
		crrs := crrsOfPod(ns, string(pod.UID))
		g.Expect(crrs).NotTo(BeEmpty())
		var stopped []string
		for _, c := range crrs {
			g.Expect(c.Spec.PodName).To(Equal(pod.Name))
			if c.Status.Phase == appsv1alpha1.RecreateSucceeded {
				stopped = append(stopped, c.Spec.Containers[0].StatusContext.ContainerID)
			}
		}
		g.Expect(stopped).To(ContainElement(before.ContainerID), "a Succeeded CRR stopped the failing instance")
	}).WithTimeout(60 * time.Second).Should(Succeed())

	By("the daemon reported Killing; the kubelet neither probed nor killed")
	Eventually(hasEvent(ns, pod.Name, "Killing", daemonReporter, "")).WithTimeout(30 * time.Second).Should(BeTrue())
	Expect(hasEvent(ns, pod.Name, "Killing", "kubelet", "")()).To(BeFalse(), "the kubelet killed the container")
	Expect(hasEvent(ns, pod.Name, "Unhealthy", "kubelet", "")()).To(BeFalse(), "the kubelet ran a liveness probe")
}

var _ = Describe("HTTP liveness failure of an enrolled pod (scenario 1)", Label(olmSmoke), func() {
	It("restarts the container through a CRR, with no native livenessProbe left for the kubelet", func() {
		ns := newNamespace("http")
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true})
		pod := onlyPod(ns, "web")

		By("the pod webhook moved the probe out of the pod spec")
		Expect(pod.Spec.Containers[0].LivenessProbe).To(BeNil())
		Expect(pod.Annotations).To(HaveKey(appsv1alpha1.AnnotationProbeContext))
		Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, appsv1alpha1.TrueValue))

		setSick(pod, true)
		expectRestartedByOperator(ns, pod)

		By("the new container is healthy (fresh /tmp), so no further restart follows")
		Consistently(restartCount(ns, pod.Name)).WithTimeout(8 * time.Second).Should(BeEquivalentTo(1))
	})
})

var _ = Describe("exec, TCP and gRPC liveness failures (scenario 2)", func() {
	DescribeTable("each lead to a restart through a CRR",
		func(probe *corev1.Probe, makeSick bool) {
			ns := newNamespace("probe")
			deployApp(ns, app{name: "svc", replicas: 1, probe: probe, enrolled: true})
			pod := onlyPod(ns, "svc")
			Expect(pod.Spec.Containers[0].LivenessProbe).To(BeNil())
			if makeSick {
				setSick(pod, true)
			}
			expectRestartedByOperator(ns, pod)
		},
		Entry("exec: /app check exits 1", execProbe(), true),
		Entry("exec: /app check outlives timeoutSeconds", execProbe("-sleep", "3s"), false),
		Entry("TCP: the port is closed", tcpProbe(), true),
		Entry("gRPC: grpc.health.v1 NOT_SERVING", grpcProbe(), true),
	)
})

var _ = Describe("a ContainerRecreateRequest made by hand (scenario 7)", func() {
	It("restarts the named container of a pod that is not enrolled", func() {
		ns := newNamespace("crr")
		deployApp(ns, app{name: "plain", replicas: 1})
		pod := onlyPod(ns, "plain")
		before := containerStatus(&pod, appContainer)

		crr := &appsv1alpha1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: ns},
			Spec: appsv1alpha1.ContainerRecreateRequestSpec{
				PodName:    pod.Name,
				Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: appContainer}},
			},
		}
		Expect(k8s.Create(context.Background(), crr)).To(Succeed())

		By("the CRR webhook filled the labels and the status context from the pod")
		Expect(crr.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelCRRPodUID, string(pod.UID)))
		Expect(crr.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelCRRNodeName, pod.Spec.NodeName))
		Expect(crr.Spec.Containers[0].StatusContext).NotTo(BeNil())
		Expect(crr.Spec.Containers[0].StatusContext.ContainerID).To(Equal(before.ContainerID))

		By("the daemon restarts the container and the CRR Succeeds")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(context.Background(), clientKey(crr), crr)).To(Succeed())
			g.Expect(crr.Status.Phase).To(Equal(appsv1alpha1.RecreateSucceeded), crr.Status.Message)
		}).WithTimeout(60 * time.Second).Should(Succeed())
		after := containerStatus(getPod(ns, pod.Name), appContainer)
		Expect(after.RestartCount).To(Equal(before.RestartCount + 1))
		Expect(after.ContainerID).NotTo(Equal(before.ContainerID))
		Expect(hasEvent(ns, pod.Name, "Killing", daemonReporter, "")()).To(BeTrue())
	})
})
