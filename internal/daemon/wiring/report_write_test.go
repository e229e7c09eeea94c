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

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/report"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
)

var _ = Describe("node daemon results", func() {
	It("writes them to the node's report only, never to the NodePodProbe", func() {
		tg := startTargets()
		node := "node-report"
		okPod := tg.createPod(node, "report-ok", "containerd://report-ok")
		failPod := tg.createPod(node, "report-fail", "containerd://report-fail")
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{
			podProbe(okPod, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(tg.httpPort))}}),
			podProbe(failPod, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/fail", Port: intstr.FromInt32(int32(tg.httpPort))}}),
		}
		createNPP(npp)

		By("the manager's Mapped condition on the NodePodProbe")
		at := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
		mapped := getNPP(node)
		mapped.Status.Conditions = []metav1.Condition{{Type: appsv1alpha1.ConditionMapped, Status: metav1.ConditionTrue,
			Reason: appsv1alpha1.ReasonSpecWritten, LastTransitionTime: at}}
		Expect(k8sClient.Status().Update(ctx, mapped)).To(Succeed())

		startDaemon(node, tg.rt)
		Eventually(func(g Gomega) {
			rep := getReport(node)
			g.Expect(rep.Written()).To(BeTrue())
			g.Expect(rep.Status.ProbedGeneration).To(Equal(mapped.Generation))
			g.Expect(rep.Status.ProbedPods).To(BeEquivalentTo(2))
			g.Expect(rep.Status.FailingProbes).To(BeEquivalentTo(1))
			g.Expect(rep.Status.PodProbeStatuses).To(HaveLen(1), "only the failing pod")
			g.Expect(rep.Status.PodProbeStatuses[0].Name).To(Equal("report-fail"))
			g.Expect(rep.Status.PodProbeStatuses[0].ProbeStates[0].State).To(Equal(appsv1alpha1.ProbeFailed))
		}).WithTimeout(20 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		Expect(getNPP(node).ResourceVersion).To(Equal(mapped.ResourceVersion), "the daemon wrote the NodePodProbe")

		By("a spec change: the report follows, the NodePodProbe changes by the spec update only")
		reportRV := getReport(node).ResourceVersion
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
		Consistently(func() string { return getNPP(node).ResourceVersion }).WithTimeout(2*time.Second).
			Should(Equal(cur.ResourceVersion), "only the spec update changed the NodePodProbe")
		Expect(getNPP(node).Status.Conditions).To(HaveLen(1), "the manager's condition stays")
	})

	It("writes nothing while the node has no report, and the report once the manager creates it", func() {
		tg := startTargets()
		node := "node-no-report"
		failPod := tg.createPod(node, "noreport-fail", "containerd://noreport-fail")
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{
			podProbe(failPod, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/fail", Port: intstr.FromInt32(int32(tg.httpPort))}}),
		}
		Expect(k8sClient.Create(ctx, npp)).To(Succeed())
		eng := startDaemon(node, tg.rt)
		Eventually(func() appsv1alpha1.ProbeState {
			e, _ := eng.Probes.Results.Get(results.Key{PodUID: failPod.UID, Container: "app", Probe: "noreport-fail-app"})
			return e.State
		}).WithTimeout(10 * time.Second).Should(Equal(appsv1alpha1.ProbeFailed))
		Consistently(func(g Gomega) {
			g.Expect(getNPP(node).ResourceVersion).To(Equal(npp.ResourceVersion))
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: node}, &appsv1alpha1.NodePodProbeReport{}))).
				To(BeTrue(), "the daemon creates no report")
		}).WithTimeout(2 * time.Second).Should(Succeed())
		Expect(eng.Status.Writes()).To(BeZero())

		By("the manager creates the report: the failure is written to it")
		Expect(k8sClient.Create(ctx, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}})).To(Succeed())
		Eventually(func(g Gomega) {
			rep := getReport(node)
			g.Expect(rep.Status.FailingProbes).To(BeEquivalentTo(1))
			g.Expect(rep.Status.PodProbeStatuses).To(HaveLen(1))
		}).WithTimeout(3 * report.DefaultRefreshCheck).Should(Succeed())
		Expect(getNPP(node).ResourceVersion).To(Equal(npp.ResourceVersion), "the daemon wrote the NodePodProbe")
	})
})
