//go:build e2e

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

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

var _ = Describe("a Deployment with a PodDisruptionBudget and a policy that sets no maxUnavailable", func() {
	It("restarts its 4 hangs of 6 one at a time, as the PodDisruptionBudget's maxUnavailable 1 allows, and names it in the holds", func() {
		nodeA, nodeB := twoNodes()
		ns := newNamespace("pdb")
		const replicas, allowed = 6, 1
		createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{
			MaxFailing: ptr.To(intstr.FromInt32(5)), // 4 failing is no storm
			RateLimit:  policyv1alpha1.RateLimit{RestartsPerMinute: 120, Burst: 20},
		})
		Expect(k8s.Create(context.Background(), &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(allowed)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		})).To(Succeed())
		deployApp(ns, app{name: "web", replicas: replicas, probe: httpProbe(), enrolled: true, spread: true, ready: true})
		var hung []corev1.Pod
		for _, node := range []string{nodeA, nodeB} {
			hung = append(hung, podsOn(ns, "web", node)[:2]...)
		}
		watch := watchBudget(ns, "web", replicas)

		By("four pods hang, two on each node")
		for i := range hung {
			setSick(hung[i], true)
		}
		for i := range hung {
			Eventually(restartCount(ns, hung[i].Name)).WithTimeout(3*time.Minute).Should(BeNumerically(">=", 1), "%s restarted", hung[i].Name)
		}
		Eventually(func() int { return len(crrsIn(ns)) }).Should(Equal(len(hung)))
		time.Sleep(time.Second) // the last restart's pod Ready again, sampled
		watch.end()

		most, inFlight, _ := watch.snapshot()
		down := downAtOnce(ns, hung)
		named := 0
		for _, p := range hung {
			if hasEvent(ns, p.Name, "RestartHeld", "", "the PodDisruptionBudget web allows 1 (maxUnavailable 1)")() {
				named++
			}
		}
		appendStormReport("6 replicas, 4 hangs, PodDisruptionBudget maxUnavailable %d and no maxUnavailable in the policy: at most %d unavailable (%d requests in flight, %d containers down) at once; %d of the hung pods held naming the PodDisruptionBudget",
			allowed, most, inFlight, down, named)
		Expect(inFlight).To(BeNumerically("<=", allowed))
		Expect(most).To(BeNumerically("<=", allowed), "pods unavailable at once beyond the PodDisruptionBudget")
		Expect(down).To(BeNumerically("<=", allowed), "containers down at once beyond the PodDisruptionBudget")
		Expect(named).To(BeNumerically(">=", 1), "a held restart names the PodDisruptionBudget")
		for _, p := range hung {
			Expect(restartCount(ns, p.Name)()).To(BeEquivalentTo(1), "%s restarted once", p.Name)
		}
	})
})
