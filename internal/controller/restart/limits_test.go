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
	"time"

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Specs that need a manager of their own: concurrency (a fresh manager per repetition), the
// manager-wide switch, and the rate limit on a fake clock.

var _ = Describe("Decision controller under concurrency", func() {
	// Each repetition starts its own manager (4 workers): a fresh cache, fresh expectations.
	It("never exceeds the budget when 8 failures of one workload arrive in one status write", MustPassRepeatedly(20), func() {
		stop := dt.StartManager(dt.TestConfig())
		defer stop()
		ns, node := dt.NewNamespace(), dt.NewNode()
		three := intstr.FromInt32(3)
		dt.CreatePolicy(ns, "budget", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = &three, dt.Pct("100%")
		})
		rs := dt.Deployment(ns, "burst", 10, map[string]string{"app": "burst"})
		var pods []*corev1.Pod
		var states []dt.ProbeState
		for i := range 10 {
			p := dt.CreatePod(ns, fmt.Sprintf("burst-%d", i), node, dt.PodOpts{Owner: rs, Labels: map[string]string{"app": "burst"}})
			pods = append(pods, p)
			if i < 8 {
				states = append(states, dt.Failed(p, "app", 1))
			}
		}
		dt.ReportProbes(node, pods, states...)
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(3))
		Consistently(dt.CRRCount(ns), time.Second, dt.Poll).Should(Equal(3))
	})
})

var _ = Describe("Decision controller with restarts disabled manager-wide", Ordered, func() {
	var stop func()
	BeforeAll(func() {
		c := dt.TestConfig()
		c.RestartsEnabled = false
		stop = dt.StartManager(c)
	})
	AfterAll(func() { stop() })

	It("holds every restart as Disabled and says why in the policy status", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pol := dt.CreatePolicy(ns, "all", nil)
		pod := dt.CreatePod(ns, "off", node, dt.PodOpts{})
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Eventually(dt.HeldEvents(ns, pod.Name, policyv1alpha1.HoldDisabled), dt.Wait, dt.Poll).Should(ConsistOf(ContainSubstring("--restarts=disabled")))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
		Eventually(func() string {
			c := meta.FindStatusCondition(dt.PolicyStatus(pol)().Conditions, policyv1alpha1.ConditionReady)
			if c == nil {
				return ""
			}
			return c.Message
		}, dt.Wait, dt.Poll).Should(ContainSubstring("restarts are disabled manager-wide"))
	})
})

var _ = Describe("Decision controller rate limit", Ordered, func() {
	var (
		stop  func()
		clock *clocktesting.FakeClock
	)
	BeforeAll(func() {
		clock = clocktesting.NewFakeClock(time.Now())
		c := dt.TestConfig()
		c.Clock = clock
		stop = dt.StartManager(c)
	})
	AfterAll(func() { stop() })

	It("lets a burst through, then one restart per interval", func() {
		ns := dt.NewNamespace()
		dt.CreatePolicy(ns, "slow", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: 1, Burst: 2}
		})
		// Five single pods, each on its own node (no node storm), all failing at once.
		var nodes []string
		var pods []*corev1.Pod
		for i := range 5 {
			node := dt.Name("rl-node")
			dt.RenewLease(node, clock.Now())
			nodes = append(nodes, node)
			pod := dt.CreatePod(ns, fmt.Sprintf("rl-%d", i), node, dt.PodOpts{})
			pods = append(pods, pod)
			dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		}
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(2))
		Eventually(func() int {
			n := 0
			for i := range 5 {
				n += len(dt.HeldEvents(ns, fmt.Sprintf("rl-%d", i), policyv1alpha1.HoldRateLimited)())
			}
			return n
		}, dt.Wait, dt.Poll).Should(Equal(3))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(2))

		for want := 3; want <= 4; want++ {
			By(fmt.Sprintf("a minute later the bucket has one token: restart number %d", want))
			clock.Step(time.Minute)
			// The daemons' heartbeats (every 10s in reality) wake the held pods of their nodes,
			// and the daemons keep their Failed results fresh (else they are stale evidence).
			for i, n := range nodes {
				dt.RenewLease(n, clock.Now())
				dt.ReportAt(n, clock.Now(), pods[i:i+1], dt.Failed(pods[i], "app", 1))
			}
			Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(want))
			Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(want))
		}
	})
})

var _ = Describe("Decision controller token accounting", Ordered, func() {
	var (
		stop  func()
		clock *clocktesting.FakeClock
	)
	BeforeAll(func() {
		// The clock never moves: a token that is spent stays spent.
		clock = clocktesting.NewFakeClock(time.Now())
		c := dt.TestConfig()
		c.Clock = clock
		c.Defaults.RestartsPerMinute, c.Defaults.Burst = 1, 1
		stop = dt.StartManager(c)
	})
	AfterAll(func() { stop() })

	singlePod := func(ns, podName string) *corev1.Pod {
		node := dt.Name("tok-node")
		dt.RenewLease(node, clock.Now())
		pod := dt.CreatePod(ns, podName, node, dt.PodOpts{})
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		return pod
	}

	It("gives the token back when the request is refused", func() {
		ns := dt.NewNamespace()
		dt.CreatePolicy(ns, "one-token", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: 1, Burst: 1}
		})
		allow := refuseRequests(ns)
		pod := singlePod(ns, "refused")
		// The apiserver refuses every request; the controller retries with backoff, taking the
		// policy's only token each time.
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
		allow()
		dt.ReportProbes(pod.Spec.NodeName, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1)) // decide again now
		// Each refused create gave the token back: the restart goes through although the clock
		// has not moved.
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("refused"))
	})

	It("keeps one default bucket per namespace", func() {
		noisy, calm := dt.NewNamespace(), dt.NewNamespace()
		singlePod(noisy, "first")
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(noisy).Should(ConsistOf("first"))
		singlePod(noisy, "second")
		Eventually(dt.HeldEvents(noisy, "second", policyv1alpha1.HoldRateLimited), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		singlePod(calm, "elsewhere")
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(calm).Should(ConsistOf("elsewhere"),
			"another namespace's default bucket is full")
		Consistently(dt.CRRPods, dt.Quiet, dt.Poll).WithArguments(noisy).Should(ConsistOf("first"))
	})
})

// refuseRequests makes the apiserver refuse every ContainerRecreateRequest created in ns (a
// ValidatingAdmissionPolicy) until the returned function is called.
func refuseRequests(ns string) (allow func()) {
	GinkgoHelper()
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-crr-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{appsv1alpha1.GroupVersion.Group},
						APIVersions: []string{"*"}, Resources: []string{"containerrecreaterequests"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "refused by the test"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: vap.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        vap.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
		},
	}
	Expect(k8sClient.Create(ctx, vap)).To(Succeed())
	Expect(k8sClient.Create(ctx, binding)).To(Succeed())
	probe := &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refusal-probe"},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: "none",
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}}}}
	Eventually(func() error {
		return k8sClient.Create(ctx, probe.DeepCopy(), client.DryRunAll)
	}, dt.Wait, dt.Poll).Should(MatchError(ContainSubstring("refused by the test")), "the policy is in force")
	return func() {
		Expect(k8sClient.Delete(ctx, binding)).To(Succeed())
		Expect(k8sClient.Delete(ctx, vap)).To(Succeed())
		Eventually(func() error {
			return k8sClient.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		}, dt.Wait, dt.Poll).Should(Succeed(), "the policy is gone")
	}
}
