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

package restart_test

import (
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

var _ = Describe("Decision controller after a failed request", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	It("replaces a failed request that stopped nothing when the same container instance still fails", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		dt.CreatePolicy(ns, "all", nil)
		pod := dt.CreatePod(ns, "retry", node, dt.PodOpts{})
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		first := dt.CRRs(ns)[0]

		By("no daemon picked it up: the manager failed it, nothing was stopped")
		first.Status.Phase = appsv1alpha1.RecreateFailed
		first.Status.Message = "not picked up by the node daemon"
		Expect(k8sClient.Status().Update(ctx, &first)).To(Succeed())

		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Eventually(func(g Gomega) {
			list := dt.CRRs(ns)
			g.Expect(list).To(HaveLen(1))
			g.Expect(list[0].Name).To(Equal(first.Name))
			g.Expect(list[0].UID).NotTo(Equal(first.UID), "a new request in place of the failed one")
			g.Expect(list[0].Status.Phase).NotTo(Equal(appsv1alpha1.RecreateFailed))
		}, dt.Wait, dt.Poll).Should(Succeed())
		var uid = dt.CRRs(ns)[0].UID

		By("a request still open is not replaced")
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Consistently(func() types.UID { return dt.CRRs(ns)[0].UID }, dt.Quiet, dt.Poll).Should(Equal(uid))
	})
})
