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
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Storms seen before the first restart, and restarts that do not help.
var _ = Describe("Decision controller, early storms and ineffective restarts", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = startManager(testConfig()) })
	AfterAll(func() { stop() })

	condition := func(pol *policyv1alpha1.EnhancedLivenessPolicy, t string) func() string {
		return func() string {
			c := meta.FindStatusCondition(policyStatus(pol)().Conditions, t)
			if c == nil {
				return ""
			}
			return string(c.Status) + ": " + c.Message
		}
	}

	It("holds the first pod to reach its threshold when enough siblings have started failing", func() {
		ns, node := newNamespace(), newNode()
		pol := createPolicy(ns, "web", nil) // maxFailing 50%
		labels := map[string]string{"app": "web"}
		rs := deployment(ns, "web", 10, labels)
		var pods []*corev1.Pod
		for i := range 10 {
			pods = append(pods, createPod(ns, fmt.Sprintf("web-%d", i), node, podOpts{owner: rs, labels: labels}))
		}
		// One pod has reached its failure threshold; five more have started failing.
		states := []probeState{failed(pods[0], "app", 1)}
		for _, p := range pods[1:6] {
			states = append(states, suspect(p, "app", 1))
		}
		report(node, pods, states...)
		Eventually(heldEvents(ns, pods[0].Name, policyv1alpha1.HoldFailureStorm), wait, poll).Should(ConsistOf(
			ContainSubstring("6 of 10 pods of Deployment/web are failing (5 of them starting to fail)")))
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())
		Eventually(condition(pol, policyv1alpha1.ConditionStormDetected), wait, poll).Should(
			HavePrefix("True: restarts held, more pods failing than maxFailing in: Deployment/web (1 failing and 5 starting to fail, of 10)"))

		By("a single failing pod among healthy siblings is restarted as before")
		ns2, node2 := newNamespace(), newNode()
		createPolicy(ns2, "web", nil)
		rs2 := deployment(ns2, "web", 10, labels)
		var pods2 []*corev1.Pod
		for i := range 10 {
			pods2 = append(pods2, createPod(ns2, fmt.Sprintf("web-%d", i), node2, podOpts{owner: rs2, labels: labels}))
		}
		states2 := []probeState{failed(pods2[0], "app", 1), suspect(pods2[1], "app", 1)}
		for _, p := range pods2[2:] {
			states2 = append(states2, succeeded(p, "app", 1))
		}
		report(node2, pods2, states2...)
		Eventually(crrPods, wait, poll).WithArguments(ns2).Should(ConsistOf("web-0"))
	})

	It("counts the pods its report leaves out as passing: storm held, a lone failure restarted", func() {
		labels := map[string]string{"app": "web"}
		scenario := func(suspects int) (string, []*corev1.Pod) {
			ns, node := newNamespace(), newNode()
			createPolicy(ns, "web", nil) // maxFailing 50%
			rs := deployment(ns, "web", 10, labels)
			var pods []*corev1.Pod
			for i := range 10 {
				pods = append(pods, createPod(ns, fmt.Sprintf("web-%d", i), node, podOpts{owner: rs, labels: labels}))
			}
			states := []probeState{failed(pods[0], "app", 1)}
			for _, p := range pods[1 : 1+suspects] {
				states = append(states, suspect(p, "app", 1))
			}
			// The others pass: the report does not list them.
			report(node, pods, states...)
			return ns, pods
		}
		ns, pods := scenario(5)
		Eventually(heldEvents(ns, pods[0].Name, policyv1alpha1.HoldFailureStorm), wait, poll).Should(ConsistOf(
			ContainSubstring("6 of 10 pods of Deployment/web are failing (5 of them starting to fail)")))
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())

		ns2, _ := scenario(1)
		Eventually(crrPods, wait, poll).WithArguments(ns2).Should(ConsistOf("web-0"))
	})

	It("decides a new revision's failing pod as soon as a sibling on another node passes its first probe", func() {
		// A 2-minute period: the wait for the revision's evidence is requeued after 2 minutes, so
		// only the sibling's result can end it within the test's wait.
		probePeriodSeconds = 120
		DeferCleanup(func() { probePeriodSeconds = 0 })
		ns, nodeA, nodeB := newNamespace(), newNode(), newNode()
		createPolicy(ns, "web", nil)
		labels := map[string]string{"app": "web"}
		rs := deployment(ns, "web", 3, labels)
		web0 := createPod(ns, "web-0", nodeA, podOpts{owner: rs, labels: labels})
		siblings := []*corev1.Pod{
			createPod(ns, "web-1", nodeB, podOpts{owner: rs, labels: labels}),
			createPod(ns, "web-2", nodeB, podOpts{owner: rs, labels: labels}),
		}
		report(nodeA, []*corev1.Pod{web0}, failed(web0, "app", 1))
		// It waits (no pod of the revision has passed yet, two have not been probed): no request,
		// no hold.
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())
		Expect(events(ns, web0.Name)).To(BeEmpty())

		By("node-b's daemon probes its spec: both siblings pass")
		report(nodeB, siblings)
		Eventually(crrPods, wait, poll).WithArguments(ns).Should(ConsistOf("web-0"))
	})

	It("holds a rollout whose new pods all fail, while they are a small part of the Deployment", func() {
		ns, node := newNamespace(), newNode()
		createPolicy(ns, "web", nil)
		labels := map[string]string{"app": "roll"}
		old := deployment(ns, "roll", 10, labels)
		// The new revision of the pod template: a second ReplicaSet of the same Deployment.
		fresh := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "roll-new",
			OwnerReferences: old.OwnerReferences}, Spec: *old.Spec.DeepCopy()}
		fresh.Spec.Replicas = ptr.To[int32](3)
		Expect(k8sClient.Create(ctx, fresh)).To(Succeed())
		var pods []*corev1.Pod
		for i := range 7 {
			pods = append(pods, createPod(ns, fmt.Sprintf("roll-old-%d", i), node, podOpts{owner: old, labels: labels}))
		}
		var newPods []*corev1.Pod
		for i := range 3 {
			newPods = append(newPods, createPod(ns, fmt.Sprintf("roll-new-%d", i), node, podOpts{owner: fresh, labels: labels}))
		}
		pods = append(pods, newPods...)
		report(node, pods, failed(newPods[0], "app", 1), suspect(newPods[1], "app", 1), suspect(newPods[2], "app", 1))
		Eventually(heldEvents(ns, newPods[0].Name, policyv1alpha1.HoldFailureStorm), wait, poll).Should(ConsistOf(
			ContainSubstring("3 of the 3 probed pods of ReplicaSet/roll-new, a revision of Deployment/roll")))
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())
	})

	It("holds a workload's restarts when the restarted containers fail again soon (RestartIneffective)", func() {
		ns, node := newNamespace(), newNode()
		two := intstr.FromInt32(2)
		pol := createPolicy(ns, "sticky", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.MaxUnavailable = &two })
		labels := map[string]string{"app": "sticky"}
		rs := deployment(ns, "sticky", 6, labels)
		var pods []*corev1.Pod
		for i := range 6 {
			pods = append(pods, createPod(ns, fmt.Sprintf("sticky-%d", i), node, podOpts{owner: rs, labels: labels}))
		}
		a, b := pods[0], pods[1]
		// The other four pass their probe all along.
		var healthy []probeState
		for _, p := range pods[2:] {
			healthy = append(healthy, succeeded(p, "app", 1))
		}
		report(node, pods, append(healthy, failed(a, "app", 1), failed(b, "app", 1))...)
		Eventually(crrPods, wait, poll).WithArguments(ns).Should(ConsistOf("sticky-0", "sticky-1"))

		By("the kubelet starts new containers, the requests finish, and the new containers fail at once")
		for _, p := range []*corev1.Pod{a, b} {
			setRunning(p, 2, true)
		}
		for _, c := range crrs(ns) {
			c.Status.Phase = appsv1alpha1.RecreateSucceeded
			Expect(k8sClient.Status().Update(ctx, &c)).To(Succeed())
		}
		report(node, pods, append(healthy, failed(a, "app", 2), failed(b, "app", 2))...)
		for _, p := range []*corev1.Pod{a, b} {
			Eventually(heldEvents(ns, p.Name, policyv1alpha1.HoldRestartIneffective), wait, poll).Should(ContainElement(
				ContainSubstring("2 of the last 2 restarts of Deployment/sticky in 10m0s failed their probe again soon after the restart")))
		}
		Consistently(crrCount(ns), quiet, poll).Should(Equal(2))
		Eventually(condition(pol, policyv1alpha1.ConditionRestartsIneffective), wait, poll).Should(
			Equal("True: restarts held, restarted containers fail again soon after the restart in: Deployment/sticky"))
		Eventually(func() []string { return events(ns, pol.Name) }, wait, poll).Should(ContainElement(HavePrefix("RestartIneffective: ")))

		By("with the breaker disabled the restarts go on")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pol), pol)).To(Succeed())
		pol.Spec.RestartEffectiveness.Mode = policyv1alpha1.BreakerDisabled
		Expect(k8sClient.Update(ctx, pol)).To(Succeed())
		Eventually(crrCount(ns), wait, poll).Should(Equal(4))
	})
})
