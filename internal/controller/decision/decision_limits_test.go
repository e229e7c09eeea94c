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
	"time"

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
		stop := startManager(testConfig())
		defer stop()
		ns, node := newNamespace(), newNode()
		three := intstr.FromInt32(3)
		createPolicy(ns, "budget", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = &three, pct("100%")
		})
		rs := deployment(ns, "burst", 10, map[string]string{"app": "burst"})
		var pods []*corev1.Pod
		var states []probeState
		for i := range 10 {
			p := createPod(ns, fmt.Sprintf("burst-%d", i), node, podOpts{owner: rs, labels: map[string]string{"app": "burst"}})
			pods = append(pods, p)
			if i < 8 {
				states = append(states, failed(p, "app", 1))
			}
		}
		report(node, pods, states...)
		Eventually(crrCount(ns), wait, poll).Should(Equal(3))
		Consistently(crrCount(ns), time.Second, poll).Should(Equal(3))
	})
})

var _ = Describe("Decision controller with restarts disabled manager-wide", Ordered, func() {
	var stop func()
	BeforeAll(func() {
		c := testConfig()
		c.RestartsEnabled = false
		stop = startManager(c)
	})
	AfterAll(func() { stop() })

	It("holds every restart as Disabled and says why in the policy status", func() {
		ns, node := newNamespace(), newNode()
		pol := createPolicy(ns, "all", nil)
		pod := createPod(ns, "off", node, podOpts{})
		report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		Eventually(heldEvents(ns, pod.Name, policyv1alpha1.HoldDisabled), wait, poll).Should(ConsistOf(ContainSubstring("--restarts=disabled")))
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())
		Eventually(func() string {
			c := meta.FindStatusCondition(policyStatus(pol)().Conditions, policyv1alpha1.ConditionReady)
			if c == nil {
				return ""
			}
			return c.Message
		}, wait, poll).Should(ContainSubstring("restarts are disabled manager-wide"))
	})
})

var _ = Describe("Decision controller rate limit", Ordered, func() {
	var (
		stop  func()
		clock *clocktesting.FakeClock
	)
	BeforeAll(func() {
		clock = clocktesting.NewFakeClock(time.Now())
		c := testConfig()
		c.Clock = clock
		stop = startManager(c)
	})
	AfterAll(func() { stop() })

	It("lets a burst through, then one restart per interval", func() {
		ns := newNamespace()
		createPolicy(ns, "slow", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: 1, Burst: 2}
		})
		// Five single pods, each on its own node (no node storm), all failing at once.
		var nodes []string
		var pods []*corev1.Pod
		for i := range 5 {
			node := name("rl-node")
			renewLease(node, clock.Now())
			nodes = append(nodes, node)
			pod := createPod(ns, fmt.Sprintf("rl-%d", i), node, podOpts{})
			pods = append(pods, pod)
			report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		}
		Eventually(crrCount(ns), wait, poll).Should(Equal(2))
		Eventually(func() int {
			n := 0
			for i := range 5 {
				n += len(heldEvents(ns, fmt.Sprintf("rl-%d", i), policyv1alpha1.HoldRateLimited)())
			}
			return n
		}, wait, poll).Should(Equal(3))
		Consistently(crrCount(ns), quiet, poll).Should(Equal(2))

		for want := 3; want <= 4; want++ {
			By(fmt.Sprintf("a minute later the bucket has one token: restart number %d", want))
			clock.Step(time.Minute)
			// The daemons' heartbeats (every 10s in reality) wake the held pods of their nodes,
			// and the daemons keep their Failed results fresh (else they are stale evidence).
			for i, n := range nodes {
				renewLease(n, clock.Now())
				reportAt(n, clock.Now(), pods[i:i+1], failed(pods[i], "app", 1))
			}
			Eventually(crrCount(ns), wait, poll).Should(Equal(want))
			Consistently(crrCount(ns), quiet, poll).Should(Equal(want))
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
		c := testConfig()
		c.Clock = clock
		c.Defaults.RestartsPerMinute, c.Defaults.Burst = 1, 1
		stop = startManager(c)
	})
	AfterAll(func() { stop() })

	singlePod := func(ns, podName string) *corev1.Pod {
		node := name("tok-node")
		renewLease(node, clock.Now())
		pod := createPod(ns, podName, node, podOpts{})
		report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		return pod
	}

	It("gives the token back when the request is refused", func() {
		ns := newNamespace()
		createPolicy(ns, "one-token", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: 1, Burst: 1}
		})
		allow := refuseRequests(ns)
		pod := singlePod(ns, "refused")
		// The apiserver refuses every request; the controller retries with backoff, taking the
		// policy's only token each time.
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())
		allow()
		report(pod.Spec.NodeName, []*corev1.Pod{pod}, failed(pod, "app", 1)) // decide again now
		// Each refused create gave the token back: the restart goes through although the clock
		// has not moved.
		Eventually(crrPods, wait, poll).WithArguments(ns).Should(ConsistOf("refused"))
	})

	It("keeps one default bucket per namespace", func() {
		noisy, calm := newNamespace(), newNamespace()
		singlePod(noisy, "first")
		Eventually(crrPods, wait, poll).WithArguments(noisy).Should(ConsistOf("first"))
		singlePod(noisy, "second")
		Eventually(heldEvents(noisy, "second", policyv1alpha1.HoldRateLimited), wait, poll).ShouldNot(BeEmpty())
		singlePod(calm, "elsewhere")
		Eventually(crrPods, wait, poll).WithArguments(calm).Should(ConsistOf("elsewhere"),
			"another namespace's default bucket is full")
		Consistently(crrPods, quiet, poll).WithArguments(noisy).Should(ConsistOf("first"))
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
	}, wait, poll).Should(MatchError(ContainSubstring("refused by the test")), "the policy is in force")
	return func() {
		Expect(k8sClient.Delete(ctx, binding)).To(Succeed())
		Expect(k8sClient.Delete(ctx, vap)).To(Succeed())
		Eventually(func() error {
			return k8sClient.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		}, wait, poll).Should(Succeed(), "the policy is gone")
	}
}
