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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// replacementOn returns a running pod of the app on node other than old (nil: none yet).
func replacementOn(ns, name, node string, old corev1.Pod) func() *corev1.Pod {
	return func() *corev1.Pod {
		for _, p := range podsOn(ns, name, node) {
			if p.UID != old.UID {
				return &p
			}
		}
		return nil
	}
}

var _ = Describe("a container that fails only on node A, restartEffectiveness.action Evict", func() {
	It("evicts the pod on node A whose restart did not help while its sibling on node B passes; the kubelet keeps restarting the native twin", func() {
		nodeA, nodeB := twoNodes()
		ns, native := newNamespace("evict"), newNamespace("evict-native")
		createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{RestartEffectiveness: policyv1alpha1.RestartEffectiveness{
			MinIneffective: 1, Action: policyv1alpha1.IneffectiveEvict}})
		// The exec check fails where the downward API's NODE_NAME is node A, whatever the pod.
		probe := execProbe("-sick-on-node", nodeA)
		deployApp(ns, app{name: "web", replicas: 2, probe: probe, enrolled: true, spread: true, noWait: true})
		deployApp(native, app{name: "web", replicas: 2, probe: probe, spread: true, noWait: true})
		var onA, onB corev1.Pod
		Eventually(func(g Gomega) {
			a, b := podsOn(ns, "web", nodeA), podsOn(ns, "web", nodeB)
			g.Expect(a).To(HaveLen(1))
			g.Expect(b).To(HaveLen(1))
			onA, onB = a[0], b[0]
		}).WithTimeout(90 * time.Second).Should(Succeed())

		By(fmt.Sprintf("the pod on %s is restarted once, its new container fails again at once, and it is evicted", nodeA))
		Eventually(hasEvent(ns, onA.Name, "Evicted", "", "evicting it")).WithTimeout(120 * time.Second).Should(BeTrue())
		Expect(hasEvent(ns, "policy", "Evicted", "", onA.Name)()).To(BeTrue(), "the policy's event")
		Expect(crrsOfPod(ns, string(onA.UID))).To(HaveLen(1), "one restart before the eviction")
		Eventually(func() bool {
			p := &corev1.Pod{}
			err := k8s.Get(context.Background(), client.ObjectKeyFromObject(&onA), p)
			return apierrors.IsNotFound(err) || err == nil && p.UID != onA.UID
		}).WithTimeout(60*time.Second).Should(BeTrue(), "the evicted pod is gone")
		Expect(restartCount(ns, onB.Name)()).To(BeZero(), "the sibling on %s passes and is never restarted", nodeB)
		Expect(crrsOfPod(ns, string(onB.UID))).To(BeEmpty())

		By("its replacement is scheduled: the topology spread constraint (maxSkew 1, one pod on node B) allows only node A, and it fails there as well")
		var repl *corev1.Pod
		Eventually(func() *corev1.Pod { repl = replacementOn(ns, "web", nodeA, onA)(); return repl }).
			WithTimeout(60 * time.Second).ShouldNot(BeNil())
		Eventually(probeFailed(nodeA, repl.UID)).WithTimeout(30 * time.Second).Should(BeTrue())

		By(fmt.Sprintf("natively the kubelet keeps restarting the pod on %s", nodeA))
		nativeA := podsOn(native, "web", nodeA)
		Expect(nativeA).To(HaveLen(1))
		Eventually(restartCount(native, nativeA[0].Name)).WithTimeout(60 * time.Second).Should(BeNumerically(">=", 2))
	})
})
