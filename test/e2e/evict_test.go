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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
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

// setUnschedulable cordons (true) or uncordons (false) the node.
func setUnschedulable(node string, unschedulable bool) {
	GinkgoHelper()
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, unschedulable)
	Expect(k8s.Patch(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
		client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}

// scaleApp sets the app's Deployment to n replicas.
func scaleApp(ns, name string, n int32) {
	GinkgoHelper()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n)
	Expect(k8s.Patch(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}

var _ = Describe("a container that fails only on node A, restartEffectiveness.action Evict", Serial, func() {
	It("evicts the pod on node A whose restart did not help while its sibling on node B passes, and its replacement runs on node B; the kubelet keeps restarting the native twin", func() {
		nodeA, nodeB := twoNodes()
		ns, native := newNamespace("evict"), newNamespace("evict-native")
		createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{RestartEffectiveness: policyv1alpha1.RestartEffectiveness{
			MinIneffective: 1, Action: policyv1alpha1.IneffectiveEvict}})
		// The exec check fails where the downward API's NODE_NAME is node A, whatever the pod.
		probe := execProbe("-sick-on-node", nodeA)

		By(fmt.Sprintf("one pod on each node, no spread constraint: the first on %s (%s cordoned), the second on %s (%s cordoned)", nodeB, nodeA, nodeA, nodeB))
		DeferCleanup(setUnschedulable, nodeA, false)
		DeferCleanup(setUnschedulable, nodeB, false)
		setUnschedulable(nodeA, true)
		deployApp(ns, app{name: "web", replicas: 1, probe: probe, enrolled: true})
		deployApp(native, app{name: "web", replicas: 1, probe: probe})
		setUnschedulable(nodeA, false)
		setUnschedulable(nodeB, true)
		scaleApp(ns, "web", 2)
		scaleApp(native, "web", 2)
		var onA, onB corev1.Pod
		Eventually(func(g Gomega) {
			a, b := podsOn(ns, "web", nodeA), podsOn(ns, "web", nodeB)
			g.Expect(a).To(HaveLen(1))
			g.Expect(b).To(HaveLen(1))
			g.Expect(podsOn(native, "web", nodeA)).To(HaveLen(1))
			onA, onB = a[0], b[0]
		}).WithTimeout(60 * time.Second).Should(Succeed())
		setUnschedulable(nodeB, false)

		By(fmt.Sprintf("the pod on %s is restarted once, its new container fails again at once, and it is evicted", nodeA))
		Eventually(hasEvent(ns, onA.Name, "Evicted", "", "evicting it")).WithTimeout(120 * time.Second).Should(BeTrue())
		Expect(hasEvent(ns, "policy", "Evicted", "", onA.Name)()).To(BeTrue(), "the policy's event")
		Expect(crrsOfPod(ns, string(onA.UID))).To(HaveLen(1), "one restart before the eviction")
		owner := metav1.GetControllerOf(&onA)
		Expect(owner).NotTo(BeNil())
		policy := &policyv1alpha1.EnhancedLivenessPolicy{}
		Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "policy"}, policy)).To(Succeed())
		Expect(policy.Status.RecentEvictions).To(ContainElement(SatisfyAll(HaveField("PodUID", onA.UID), HaveField("Node", nodeA),
			HaveField("OwnerKind", "ReplicaSet"), HaveField("OwnerName", owner.Name))), "the eviction is listed before it is made")
		Eventually(func() bool {
			p := &corev1.Pod{}
			err := k8s.Get(context.Background(), client.ObjectKeyFromObject(&onA), p)
			return apierrors.IsNotFound(err) || err == nil && p.UID != onA.UID
		}).WithTimeout(60*time.Second).Should(BeTrue(), "the evicted pod is gone")
		Expect(restartCount(ns, onB.Name)()).To(BeZero(), "the sibling on %s passes and is never restarted", nodeB)
		Expect(crrsOfPod(ns, string(onB.UID))).To(BeEmpty())

		By(fmt.Sprintf("its replacement is steered away from %s (a preferred node affinity term), runs on %s, becomes Ready and passes", nodeA, nodeB))
		var repl *corev1.Pod
		Eventually(func() *corev1.Pod { repl = replacementOn(ns, "web", nodeB, onB)(); return repl }).
			WithTimeout(60 * time.Second).ShouldNot(BeNil())
		Expect(repl.Annotations).To(HaveKeyWithValue(appsv1alpha1.AnnotationAvoidedNodes, nodeA))
		Expect(repl.Spec.Affinity).NotTo(BeNil())
		Expect(repl.Spec.Affinity.NodeAffinity).NotTo(BeNil())
		Expect(repl.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution).To(ConsistOf(corev1.PreferredSchedulingTerm{
			Weight: 100, Preference: corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{nodeA}}}}}))
		Expect(repl.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution).To(BeNil(), "preferred only")
		Eventually(func() bool { return isReady(*getPod(ns, repl.Name)) }).WithTimeout(60 * time.Second).Should(BeTrue())
		// Several failure thresholds (3 × 1 s) of the probe: it passes on node B.
		Consistently(func(g Gomega) {
			g.Expect(probeFailed(nodeB, repl.UID)()).To(BeFalse())
			g.Expect(restartCount(ns, repl.Name)()).To(BeZero())
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Expect(crrsOfPod(ns, string(repl.UID))).To(BeEmpty())

		By(fmt.Sprintf("natively the kubelet keeps restarting the pod on %s", nodeA))
		nativeA := podsOn(native, "web", nodeA)
		Expect(nativeA).To(HaveLen(1))
		Eventually(restartCount(native, nativeA[0].Name)).WithTimeout(60 * time.Second).Should(BeNumerically(">=", 2))
	})
})
