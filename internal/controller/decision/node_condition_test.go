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

package decision

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/nodecondition"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

var _ = Describe("Decision controller, the Node condition of a node storm", Ordered, func() {
	var stop func()
	c := testConfig()
	// Two workloads failing on a node of two pods are a node storm; each workload's own failing
	// pod is within its maxFailing (1 of 2).
	c.NodeStorm = rules2NodeStorm()
	c.NodeConditionInterval = 200 * time.Millisecond
	BeforeAll(func() { stop = startManager(c) })
	AfterAll(func() { stop() })

	// node creates a Node object for a node name with a daemon Lease (newNode).
	node := func() string {
		n := newNode()
		obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		// The kubelet's own condition, which the manager's patches must leave alone.
		obj.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
		Expect(k8sClient.Status().Update(ctx, obj)).To(Succeed())
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
	status := func(n string) func() corev1.ConditionStatus {
		return func() corev1.ConditionStatus {
			if c := condition(n)(); c != nil {
				return c.Status
			}
			return ""
		}
	}
	// pair creates a two-replica Deployment in ns with one pod on a and one on b.
	pair := func(ns, name, a, b string) (onA, onB *corev1.Pod) {
		rs := deployment(ns, name, 2, map[string]string{"app": name})
		return createPod(ns, name+"-a", a, podOpts{owner: rs}), createPod(ns, name+"-b", b, podOpts{owner: rs})
	}

	It("is set on the node where two namespaces' pods are held NodeStorm while they pass elsewhere, kept across a manager restart, and cleared", func() {
		ns1, ns2 := newNamespace(), newNamespace()
		a, b := node(), node()
		web1A, web1B := pair(ns1, "web", a, b)
		web2A, web2B := pair(ns2, "web", a, b)
		report(b, []*corev1.Pod{web1B, web2B}, succeeded(web1B, "app", 1), succeeded(web2B, "app", 1))
		report(a, []*corev1.Pod{web1A, web2A}, failed(web1A, "app", 1), failed(web2A, "app", 1))
		Eventually(heldEvents(ns1, web1A.Name, policyv1alpha1.HoldNodeStorm), wait, poll).ShouldNot(BeEmpty())
		Eventually(status(a), wait, poll).Should(Equal(corev1.ConditionTrue))
		cond := condition(a)()
		Expect(cond.Reason).To(Equal(nodecondition.ReasonHeld))
		Expect(cond.Message).To(ContainSubstring("restarts of 2 pods of 2 workloads in 2 namespaces (%s: 1, %s: 1) are held NodeStorm on node %s since ",
			min(ns1, ns2), max(ns1, ns2), a))
		Expect(status(b)()).To(BeEmpty())
		Expect(events("default", a)).To(ContainElement(HavePrefix(EventNodeStormHeld + ": ")))
		Expect(promtestutil.ToFloat64(nodeStormNodes)).To(Equal(1.0))
		Expect(crrCount(ns1)()).To(BeZero())
		Expect(readyOf(a)).To(Equal(corev1.ConditionTrue), "the kubelet's condition stays beside it")

		By("a new manager leads: the condition stays while the storm is held again")
		stop()
		stop = startManager(c)
		Consistently(status(a), c.HoldRecheckInterval+2*time.Second, poll).Should(Equal(corev1.ConditionTrue))

		By("the storm ends: the condition goes False, with an event")
		report(a, []*corev1.Pod{web1A, web2A}, succeeded(web1A, "app", 1), succeeded(web2A, "app", 1))
		Eventually(status(a), wait, poll).Should(Equal(corev1.ConditionFalse))
		Expect(condition(a)().Reason).To(Equal(nodecondition.ReasonNone))
		Eventually(func() []string { return events("default", a) }, wait, poll).Should(ContainElement(HavePrefix(EventNoNodeStorm + ": ")))
		Expect(promtestutil.ToFloat64(nodeStormNodes)).To(BeZero())
		Expect(readyOf(a)).To(Equal(corev1.ConditionTrue))
		Expect(status(b)()).To(BeEmpty())
	})

	It("is never set by one namespace's pods, however many workloads", func() {
		ns := newNamespace()
		a, b := node(), node()
		web1A, web1B := pair(ns, "web1", a, b)
		web2A, web2B := pair(ns, "web2", a, b)
		report(b, []*corev1.Pod{web1B, web2B}, succeeded(web1B, "app", 1), succeeded(web2B, "app", 1))
		report(a, []*corev1.Pod{web1A, web2A}, failed(web1A, "app", 1), failed(web2A, "app", 1))
		Eventually(heldEvents(ns, web2A.Name, policyv1alpha1.HoldNodeStorm), wait, poll).ShouldNot(BeEmpty())
		Consistently(status(a), quiet, poll).Should(BeEmpty())
	})

	It("is never set when the held workloads fail on the other nodes too", func() {
		ns1, ns2 := newNamespace(), newNamespace()
		a, b := node(), node()
		web1A, web1B := pair(ns1, "web", a, b)
		web2A, web2B := pair(ns2, "web", a, b)
		// b: one of its two pods failing is no storm there; web1's pod there fails too.
		report(b, []*corev1.Pod{web1B, web2B}, failed(web1B, "app", 1), succeeded(web2B, "app", 1))
		report(a, []*corev1.Pod{web1A, web2A}, failed(web1A, "app", 1), failed(web2A, "app", 1))
		Eventually(heldEvents(ns2, web2A.Name, policyv1alpha1.HoldNodeStorm), wait, poll).ShouldNot(BeEmpty())
		Consistently(status(a), quiet, poll).Should(BeEmpty())
	})
})

// rules2NodeStorm: more than half of a node's pods failing, in two workloads or more.
func rules2NodeStorm() rules.NodeStormRule {
	return rules.NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 2}
}

// readyOf returns the status of the node's Ready condition.
func readyOf(n string) corev1.ConditionStatus {
	obj := &corev1.Node{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: n}, obj)).To(Succeed())
	for _, c := range obj.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}
