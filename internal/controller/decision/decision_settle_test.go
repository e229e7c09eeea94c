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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

var _ = Describe("Failure storm settling", Ordered, func() {
	const settle = 6 * time.Second
	var stop func()
	BeforeAll(func() {
		c := testConfig()
		c.StormSettle = settle
		stop = startManager(c)
	})
	AfterAll(func() { stop() })

	It("keeps holding a storm that drops back within maxFailing until it has settled, then restarts", func() {
		// 10 replicas, maxFailing 50% = 5, maxUnavailable 25% = 3.
		ns, node := newNamespace(), newNode()
		pol := createPolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = pct("25%"), pct("50%")
		})
		rs := deployment(ns, "web", 10, map[string]string{"app": "web"})
		pods := make([]*corev1.Pod, 10)
		for i := range pods {
			pods[i] = createPod(ns, fmt.Sprintf("web-%d", i), node, podOpts{owner: rs, labels: map[string]string{"app": "web"}})
		}
		states := func(nFailing int) []probeState {
			var out []probeState
			for i, p := range pods {
				if i < nFailing {
					out = append(out, failed(p, "app", 1))
				} else {
					out = append(out, succeeded(p, "app", 1))
				}
			}
			return out
		}

		By("6 of 10 failing in one report: a storm, nothing restarted")
		report(node, pods, states(6)...)
		Eventually(heldEvents(ns, "web-0", policyv1alpha1.HoldFailureStorm), wait, poll).ShouldNot(BeEmpty())
		Expect(crrCount(ns)()).To(Equal(0))

		By("one recovers: 5 failing is within maxFailing, but the storm has not settled yet")
		report(node, pods, states(5)...)
		Consistently(crrCount(ns), settle/3, poll).Should(Equal(0))
		Expect(meta.IsStatusConditionTrue(policyStatus(pol)().Conditions, policyv1alpha1.ConditionStormDetected)).To(BeTrue(),
			"StormDetected stays True while the storm settles")

		By("once settled, restarts resume within maxUnavailable")
		Eventually(crrCount(ns), settle+wait, poll).Should(Equal(3))
		Consistently(crrCount(ns), quiet, poll).Should(Equal(3))
		Eventually(func() bool {
			return meta.IsStatusConditionFalse(policyStatus(pol)().Conditions, policyv1alpha1.ConditionStormDetected)
		}, wait, poll).Should(BeTrue())
	})
})
