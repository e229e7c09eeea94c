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

package policy

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
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
		Eventually(heldEvents(ns, pod.Name, protection.ReasonDisabled), wait, poll).Should(ConsistOf(ContainSubstring("--restarts=disabled")))
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
		for i := range 5 {
			node := name("rl-node")
			renewLease(node, clock.Now())
			nodes = append(nodes, node)
			pod := createPod(ns, fmt.Sprintf("rl-%d", i), node, podOpts{})
			report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		}
		Eventually(crrCount(ns), wait, poll).Should(Equal(2))
		Eventually(func() int {
			n := 0
			for i := range 5 {
				n += len(heldEvents(ns, fmt.Sprintf("rl-%d", i), protection.ReasonRateLimited)())
			}
			return n
		}, wait, poll).Should(Equal(3))
		Consistently(crrCount(ns), quiet, poll).Should(Equal(2))

		for want := 3; want <= 4; want++ {
			By(fmt.Sprintf("a minute later the bucket has one token: restart number %d", want))
			clock.Step(time.Minute)
			// The daemons' heartbeats (every 10s in reality) wake the held pods of their nodes.
			for _, n := range nodes {
				renewLease(n, clock.Now())
			}
			Eventually(crrCount(ns), wait, poll).Should(Equal(want))
			Consistently(crrCount(ns), quiet, poll).Should(Equal(want))
		}
	})
})
