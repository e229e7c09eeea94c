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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"
)

// pdbSpec is a PodDisruptionBudget of the spec's app: minAvailable or maxUnavailable.
type pdbSpec struct {
	name                     string
	minAvailable, maxUnavail *intstr.IntOrString
}

var _ = Describe("The PodDisruptionBudget as the budget of restarts", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	num := func(n int32) *intstr.IntOrString { return ptr.To(intstr.FromInt32(n)) }

	// All 4 Ready pods of a Deployment fail at once; the storm breaker is off (maxFailing 100%),
	// so the budget alone says how many are restarted at once.
	DescribeTable("restarts of 4 failing Ready pods, at once",
		func(policyMax *intstr.IntOrString, pdbs []pdbSpec, restarted int, says string) {
			ns, node := dt.NewNamespace(), dt.NewNode()
			dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
				s.MaxUnavailable, s.MaxFailing = policyMax, dt.Pct("100%")
			})
			for _, p := range pdbs {
				Expect(k8sClient.Create(ctx, &policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.name},
					Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: p.minAvailable, MaxUnavailable: p.maxUnavail,
						Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
				})).To(Succeed())
			}
			pods := dt.FailingFleet(ns, node, "web", 4)
			dt.ReportProbes(node, pods, dt.AllFailed(pods)...)

			Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(restarted))
			Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(restarted))
			restartedPods := map[string]bool{}
			for _, n := range dt.CRRPods(ns) {
				restartedPods[n] = true
			}
			for _, p := range pods {
				if !restartedPods[p.Name] {
					Eventually(dt.HeldEvents(ns, p.Name, policyv1alpha1.HoldMaxUnavailable), dt.Wait, dt.Poll).Should(
						ContainElement(ContainSubstring(says)))
				}
			}
		},
		Entry("maxUnavailable 1", nil, []pdbSpec{{name: "web", maxUnavail: num(1)}}, 1,
			"1 of 4 pods of Deployment/web are unavailable, the PodDisruptionBudget web allows 1 (maxUnavailable 1)"),
		Entry("minAvailable 2", nil, []pdbSpec{{name: "web", minAvailable: num(2)}}, 2,
			"the PodDisruptionBudget web allows 2 (minAvailable 2)"),
		Entry("maxUnavailable 30%, rounded up", nil, []pdbSpec{{name: "web", maxUnavail: dt.Pct("30%")}}, 2,
			"the PodDisruptionBudget web allows 2 (maxUnavailable 30%)"),
		Entry("minAvailable 50%", nil, []pdbSpec{{name: "web", minAvailable: dt.Pct("50%")}}, 2,
			"the PodDisruptionBudget web allows 2 (minAvailable 50%)"),
		Entry("several: the most restrictive", nil,
			[]pdbSpec{{name: "loose", maxUnavail: num(3)}, {name: "strict", minAvailable: num(3)}}, 1,
			"the PodDisruptionBudget strict allows 1 (minAvailable 3)"),
		Entry("none: --default-max-unavailable (25%)", nil, nil, 1,
			"maxUnavailable is 1 (25%, --default-max-unavailable: no policy or PodDisruptionBudget sets one)"),
		Entry("an explicit maxUnavailable wins", num(3), []pdbSpec{{name: "web", maxUnavail: num(1)}}, 3,
			"maxUnavailable is 3 (policy "),
	)
})
