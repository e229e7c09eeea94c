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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

var _ = Describe("Failure storm settling", Ordered, func() {
	const settle = 6 * time.Second
	var stop func()
	BeforeAll(func() {
		c := dt.TestConfig()
		c.StormSettle = settle
		stop = dt.StartManager(c)
	})
	AfterAll(func() { stop() })

	It("keeps holding a storm that drops back within maxFailing until it has settled, then restarts", func() {
		// 10 replicas, maxFailing 50% = 5, maxUnavailable 25% = 3.
		ns, node := dt.NewNamespace(), dt.NewNode()
		pol := dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = dt.Pct("25%"), dt.Pct("50%")
		})
		rs := dt.Deployment(ns, "web", 10, map[string]string{"app": "web"})
		pods := make([]*corev1.Pod, 10)
		for i := range pods {
			pods[i] = dt.CreatePod(ns, fmt.Sprintf("web-%d", i), node, dt.PodOpts{Owner: rs, Labels: map[string]string{"app": "web"}})
		}
		states := func(nFailing int) []dt.ProbeState {
			var out []dt.ProbeState
			for i, p := range pods {
				if i < nFailing {
					out = append(out, dt.Failed(p, "app", 1))
				} else {
					out = append(out, dt.Succeeded(p, "app", 1))
				}
			}
			return out
		}

		By("6 of 10 failing in one report: a storm, nothing restarted")
		dt.ReportProbes(node, pods, states(6)...)
		Eventually(dt.HeldEvents(ns, "web-0", policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Expect(dt.CRRCount(ns)()).To(Equal(0))

		By("one recovers: 5 failing is within maxFailing, but the storm has not settled yet")
		dt.ReportProbes(node, pods, states(5)...)
		Consistently(dt.CRRCount(ns), settle/3, dt.Poll).Should(Equal(0))
		Expect(meta.IsStatusConditionTrue(dt.PolicyStatus(pol)().Conditions, policyv1alpha1.ConditionStormDetected)).To(BeTrue(),
			"StormDetected stays True while the storm settles")

		By("once settled, restarts resume within maxUnavailable")
		Eventually(dt.CRRCount(ns), settle+dt.Wait, dt.Poll).Should(Equal(3))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(3))
		Eventually(func() bool {
			return meta.IsStatusConditionFalse(dt.PolicyStatus(pol)().Conditions, policyv1alpha1.ConditionStormDetected)
		}, dt.Wait, dt.Poll).Should(BeTrue())
	})
})
