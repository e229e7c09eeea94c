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
	"fmt"

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

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
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	condition := func(pol *policyv1alpha1.EnhancedLivenessPolicy, t string) func() string {
		return func() string {
			c := meta.FindStatusCondition(dt.PolicyStatus(pol)().Conditions, t)
			if c == nil {
				return ""
			}
			return string(c.Status) + ": " + c.Message
		}
	}

	It("holds the first pod to reach its threshold when enough siblings have started failing", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pol := dt.CreatePolicy(ns, "web", nil) // maxFailing 50%
		labels := map[string]string{"app": "web"}
		rs := dt.Deployment(ns, "web", 10, labels)
		var pods []*corev1.Pod
		for i := range 10 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("web-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels}))
		}
		// One pod has reached its failure threshold; five more have started failing.
		states := []dt.ProbeState{dt.Failed(pods[0], "app", 1)}
		for _, p := range pods[1:6] {
			states = append(states, dt.Suspect(p, "app", 1))
		}
		dt.ReportProbes(node, pods, states...)
		Eventually(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).Should(ConsistOf(
			ContainSubstring("6 of 10 pods of Deployment/web are failing (5 of them starting to fail)")))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
		Eventually(condition(pol, policyv1alpha1.ConditionStormDetected), dt.Wait, dt.Poll).Should(
			HavePrefix("True: restarts held, more pods failing than maxFailing in: Deployment/web (1 failing and 5 starting to fail, of 10)"))

		By("a single failing pod among healthy siblings is restarted as before")
		ns2, node2 := dt.NewNamespace(), dt.NewNode()
		dt.CreatePolicy(ns2, "web", nil)
		rs2 := dt.Deployment(ns2, "web", 10, labels)
		var pods2 []*corev1.Pod
		for i := range 10 {
			pods2 = append(pods2, dt.CreatePod(ns2, fmt.Sprintf("web-%d", i), node2, dt.PodOpts{Owner: rs2, Labels: labels}))
		}
		states2 := []dt.ProbeState{dt.Failed(pods2[0], "app", 1), dt.Suspect(pods2[1], "app", 1)}
		for _, p := range pods2[2:] {
			states2 = append(states2, dt.Succeeded(p, "app", 1))
		}
		dt.ReportProbes(node2, pods2, states2...)
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns2).Should(ConsistOf("web-0"))
	})

	It("counts the pods its report leaves out as passing: storm held, a lone failure restarted", func() {
		labels := map[string]string{"app": "web"}
		scenario := func(suspects int) (string, []*corev1.Pod) {
			ns, node := dt.NewNamespace(), dt.NewNode()
			dt.CreatePolicy(ns, "web", nil) // maxFailing 50%
			rs := dt.Deployment(ns, "web", 10, labels)
			var pods []*corev1.Pod
			for i := range 10 {
				pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("web-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels}))
			}
			states := []dt.ProbeState{dt.Failed(pods[0], "app", 1)}
			for _, p := range pods[1 : 1+suspects] {
				states = append(states, dt.Suspect(p, "app", 1))
			}
			// The others pass: the report does not list them.
			dt.ReportProbes(node, pods, states...)
			return ns, pods
		}
		ns, pods := scenario(5)
		Eventually(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).Should(ConsistOf(
			ContainSubstring("6 of 10 pods of Deployment/web are failing (5 of them starting to fail)")))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())

		ns2, _ := scenario(1)
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns2).Should(ConsistOf("web-0"))
	})

	It("decides a new revision's failing pod as soon as a sibling on another node passes its first probe", func() {
		// A 2-minute period: the wait for the revision's evidence is requeued after 2 minutes, so
		// only the sibling's result can end it within the test's wait.
		dt.ProbePeriodSeconds = 120
		DeferCleanup(func() { dt.ProbePeriodSeconds = 0 })
		ns, nodeA, nodeB := dt.NewNamespace(), dt.NewNode(), dt.NewNode()
		dt.CreatePolicy(ns, "web", nil)
		labels := map[string]string{"app": "web"}
		rs := dt.Deployment(ns, "web", 3, labels)
		web0 := dt.CreatePod(ns, "web-0", nodeA, dt.PodOpts{Owner: rs, Labels: labels})
		siblings := []*corev1.Pod{
			dt.CreatePod(ns, "web-1", nodeB, dt.PodOpts{Owner: rs, Labels: labels}),
			dt.CreatePod(ns, "web-2", nodeB, dt.PodOpts{Owner: rs, Labels: labels}),
		}
		dt.ReportProbes(nodeA, []*corev1.Pod{web0}, dt.Failed(web0, "app", 1))
		// It waits (no pod of the revision has passed yet, two have not been probed): no request,
		// no hold.
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
		Expect(dt.Events(ns, web0.Name)).To(BeEmpty())

		By("node-b's daemon probes its spec: both siblings pass")
		dt.ReportProbes(nodeB, siblings)
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("web-0"))
	})

	It("holds a rollout whose new pods all fail, while they are a small part of the Deployment", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		dt.CreatePolicy(ns, "web", nil)
		labels := map[string]string{"app": "roll"}
		old := dt.Deployment(ns, "roll", 10, labels)
		// The new revision of the pod template: a second ReplicaSet of the same Deployment.
		fresh := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "roll-new",
			OwnerReferences: old.OwnerReferences}, Spec: *old.Spec.DeepCopy()}
		fresh.Spec.Replicas = ptr.To[int32](3)
		Expect(k8sClient.Create(ctx, fresh)).To(Succeed())
		var pods []*corev1.Pod
		for i := range 7 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("roll-old-%d", i), node, dt.PodOpts{Owner: old, Labels: labels}))
		}
		var newPods []*corev1.Pod
		for i := range 3 {
			newPods = append(newPods, dt.CreatePod(ns, fmt.Sprintf("roll-new-%d", i), node, dt.PodOpts{Owner: fresh, Labels: labels}))
		}
		pods = append(pods, newPods...)
		dt.ReportProbes(node, pods, dt.Failed(newPods[0], "app", 1), dt.Suspect(newPods[1], "app", 1), dt.Suspect(newPods[2], "app", 1))
		Eventually(dt.HeldEvents(ns, newPods[0].Name, policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).Should(ConsistOf(
			ContainSubstring("3 of the 3 probed pods of ReplicaSet/roll-new, a revision of Deployment/roll")))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
	})

	It("holds a workload's restarts when the restarted containers fail again soon (RestartIneffective)", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		two := intstr.FromInt32(2)
		pol := dt.CreatePolicy(ns, "sticky", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.MaxUnavailable = &two })
		labels := map[string]string{"app": "sticky"}
		rs := dt.Deployment(ns, "sticky", 6, labels)
		var pods []*corev1.Pod
		for i := range 6 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("sticky-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels}))
		}
		a, b := pods[0], pods[1]
		// The other four pass their probe all along.
		var healthy []dt.ProbeState
		for _, p := range pods[2:] {
			healthy = append(healthy, dt.Succeeded(p, "app", 1))
		}
		dt.ReportProbes(node, pods, append(healthy, dt.Failed(a, "app", 1), dt.Failed(b, "app", 1))...)
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("sticky-0", "sticky-1"))

		By("the kubelet starts new containers, the requests finish, and the new containers fail at once")
		for _, p := range []*corev1.Pod{a, b} {
			dt.SetRunning(p, 2, true)
		}
		for _, c := range dt.CRRs(ns) {
			c.Status.Phase = appsv1alpha1.RecreateSucceeded
			Expect(k8sClient.Status().Update(ctx, &c)).To(Succeed())
		}
		dt.ReportProbes(node, pods, append(healthy, dt.Failed(a, "app", 2), dt.Failed(b, "app", 2))...)
		for _, p := range []*corev1.Pod{a, b} {
			Eventually(dt.HeldEvents(ns, p.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(
				ContainSubstring("2 of the last 2 restarts of Deployment/sticky in 10m0s failed their probe again soon after the restart")))
		}
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(2))
		Eventually(condition(pol, policyv1alpha1.ConditionRestartsIneffective), dt.Wait, dt.Poll).Should(
			Equal("True: restarts held, restarted containers fail again soon after the restart in: Deployment/sticky"))
		Eventually(func() []string { return dt.Events(ns, pol.Name) }, dt.Wait, dt.Poll).Should(ContainElement(HavePrefix("RestartIneffective: ")))

		By("with the breaker disabled the restarts go on")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pol), pol)).To(Succeed())
		pol.Spec.RestartEffectiveness.Mode = policyv1alpha1.BreakerDisabled
		Expect(k8sClient.Update(ctx, pol)).To(Succeed())
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(4))
	})
})
