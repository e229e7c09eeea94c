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

package nodestorm_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/nodecondition"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"
)

// A held pod whose own probe passes again is no evidence against its node: once the canaries of
// a node storm's holds were restarted and pass, the memory still names them as the holds'
// canaries (no failure is decided again to end the holds), and the node must not stay True.
var _ = Describe("Decision controller, the Node condition once the held pods pass", Ordered, func() {
	It("goes NoNodeStorm when the canaries of the node storm's holds pass, their holds not ended yet", func() {
		clock := clocktesting.NewFakeClock(time.Now())
		c := dt.TestConfig()
		c.Clock = clock
		c.NodeStorm = rules2NodeStorm()
		c.NodeConditionInterval = 200 * time.Millisecond
		stop := dt.StartManager(c)
		defer stop()

		node := func() string {
			n := dt.Name("canary-node")
			dt.RenewLease(n, clock.Now())
			obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed()) })
			return n
		}
		condition := func(n string) func() *corev1.NodeCondition {
			return func() *corev1.NodeCondition {
				obj := &corev1.Node{}
				Expect(k8sClient.Get(ctx, client.ObjectKey{Name: n}, obj)).To(Succeed())
				for i := range obj.Status.Conditions {
					if obj.Status.Conditions[i].Type == nodecondition.Type {
						return &obj.Status.Conditions[i]
					}
				}
				return nil
			}
		}
		ns1, ns2 := dt.NewNamespace(), dt.NewNamespace()
		a, b := node(), node()
		var onA, onB []*corev1.Pod
		for _, ns := range []string{ns1, ns2} {
			rs := dt.Deployment(ns, "web", 2, map[string]string{"app": "web"})
			onA = append(onA, dt.CreatePod(ns, "web-a", a, dt.PodOpts{Owner: rs}))
			onB = append(onB, dt.CreatePod(ns, "web-b", b, dt.PodOpts{Owner: rs}))
		}
		reportB := func() {
			dt.RenewLease(b, clock.Now())
			dt.ReportAt(b, clock.Now(), onB, dt.Succeeded(onB[0], "app", 1), dt.Succeeded(onB[1], "app", 1))
		}
		reportB()
		dt.RenewLease(a, clock.Now())
		dt.ReportAt(a, clock.Now(), onA, dt.Failed(onA[0], "app", 1), dt.Failed(onA[1], "app", 1))
		Eventually(dt.HeldEvents(ns1, "web-a", policyv1alpha1.HoldNodeStorm), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Eventually(dt.HeldEvents(ns2, "web-a", policyv1alpha1.HoldNodeStorm), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		// The evidence must last nodeConditionConfirm on the manager's clock.
		time.Sleep(500 * time.Millisecond)
		clock.Step(time.Second)
		Eventually(condition(a), dt.Wait, dt.Poll).Should(HaveField("Status", corev1.ConditionTrue))

		By("after their first wait each hold's pod on node A is restarted as its canary")
		clock.Step(30 * time.Second)
		reportB()
		dt.RenewLease(a, clock.Now())
		dt.ReportAt(a, clock.Now(), onA, dt.Failed(onA[0], "app", 1), dt.Failed(onA[1], "app", 1))
		for i, ns := range []string{ns1, ns2} {
			Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("web-a"))
			dt.Finish(ns, onA[i], 2)
		}

		By("both canaries pass: no pod on node A fails, so nothing there is evidence")
		clock.Step(5 * time.Second)
		reportB()
		dt.RenewLease(a, clock.Now())
		dt.ReportAt(a, clock.Now(), onA, dt.Succeeded(onA[0], "app", 2), dt.Succeeded(onA[1], "app", 2))
		Eventually(condition(a), dt.Wait, dt.Poll).Should(And(
			HaveField("Status", corev1.ConditionFalse), HaveField("Reason", nodecondition.ReasonNone)))
	})
})
