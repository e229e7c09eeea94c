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

package wiring

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

var _ = Describe("node daemon results", func() {
	It("writes them to the node's report, and clears what an older daemon left in the NodePodProbe status", func() {
		tg := startTargets()
		node := "node-report"
		okPod := createPod(node, "report-ok", "containerd://report-ok")
		failPod := createPod(node, "report-fail", "containerd://report-fail")
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{
			podProbe(okPod, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(tg.httpPort))}}),
			podProbe(failPod, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/fail", Port: intstr.FromInt32(int32(tg.httpPort))}}),
		}
		createNPP(npp)

		By("an older daemon's full status, and the manager's Mapped condition, on the NodePodProbe")
		at := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
		old := getNPP(node)
		old.Status.ProbeResults = appsv1alpha1.ProbeResults{ObservedGeneration: old.Generation, ProbedPods: 2,
			PodProbeStatuses: []appsv1alpha1.PodProbeStatus{
				{Name: okPod.Name, Namespace: ns, UID: okPod.UID, ProbeStates: []appsv1alpha1.ContainerProbeState{{Name: "report-ok-app",
					ContainerID: "containerd://report-ok", State: appsv1alpha1.ProbeSucceeded, LastProbeTime: at, LastTransitionTime: at}}},
				{Name: failPod.Name, Namespace: ns, UID: failPod.UID, ProbeStates: []appsv1alpha1.ContainerProbeState{{Name: "report-fail-app",
					ContainerID: "containerd://report-fail", State: appsv1alpha1.ProbeSucceeded, LastProbeTime: at, LastTransitionTime: at}}},
			}}
		old.Status.Conditions = []metav1.Condition{{Type: appsv1alpha1.ConditionMapped, Status: metav1.ConditionTrue,
			Reason: appsv1alpha1.ReasonSpecWritten, LastTransitionTime: at}}
		Expect(k8sClient.Status().Update(ctx, old)).To(Succeed())

		startDaemon(node, tg.rt)
		Eventually(func(g Gomega) {
			rep := getReport(node)
			g.Expect(rep.Written()).To(BeTrue())
			g.Expect(rep.Status.ProbedGeneration).To(Equal(old.Generation))
			g.Expect(rep.Status.ProbedPods).To(BeEquivalentTo(2))
			g.Expect(rep.Status.FailingProbes).To(BeEquivalentTo(1))
			g.Expect(rep.Status.PodProbeStatuses).To(HaveLen(1), "only the failing pod")
			g.Expect(rep.Status.PodProbeStatuses[0].Name).To(Equal("report-fail"))
			g.Expect(rep.Status.PodProbeStatuses[0].ProbeStates[0].State).To(Equal(appsv1alpha1.ProbeFailed))

			npp := &appsv1alpha1.NodePodProbe{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(old), npp)).To(Succeed())
			g.Expect(npp.Status.ProbeResults.Empty()).To(BeTrue(), "the spec object no longer carries results: %+v", npp.Status.ProbeResults)
			g.Expect(npp.Status.Conditions).To(HaveLen(1), "the manager's condition stays")
			g.Expect(npp.Status.Conditions[0].Reason).To(Equal(appsv1alpha1.ReasonSpecWritten))
		}).WithTimeout(20 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

		By("later writes go to the report only")
		rv := func() string {
			npp := &appsv1alpha1.NodePodProbe{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(old), npp)).To(Succeed())
			return npp.ResourceVersion
		}
		nppRV, reportRV := rv(), getReport(node).ResourceVersion
		cur := getNPP(node)
		cur.Spec.PodProbes = cur.Spec.PodProbes[:1] // the failing pod leaves the spec
		Expect(k8sClient.Update(ctx, cur)).To(Succeed())
		Eventually(func(g Gomega) {
			rep := getReport(node)
			g.Expect(rep.ResourceVersion).NotTo(Equal(reportRV))
			g.Expect(rep.Status.ProbedGeneration).To(Equal(cur.Generation))
			g.Expect(rep.Status.PodProbeStatuses).To(BeEmpty())
			g.Expect(rep.Status.FailingProbes).To(BeZero())
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Expect(rv()).To(Equal(cur.ResourceVersion), "only the spec update changed the NodePodProbe since %s", nppRV)
	})
})
