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

package v1

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// A new pod of a controller whose pods were evicted from a node because their restarts did not
// help there prefers the other nodes (status.recentEvictions of the policies that select it).
var _ = Describe("Pod webhook steering away from nodes a workload was evicted from", Ordered, func() {
	const ns = "pods-steer"
	ownTerm := corev1.PreferredSchedulingTerm{Weight: 20, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
		Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}
	ownRequired := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
		Key: "kubernetes.io/os", Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}}}}}}

	// ownedPod is an opted-in pod of ReplicaSet owner with the pod's own node affinity, required
	// and preferred.
	ownedPod := func(namespace, owner string) *corev1.Pod {
		pod := appPod(namespace, "", optIn())
		pod.GenerateName = owner + "-"
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner,
			UID: types.UID("uid-" + owner), Controller: ptr.To(true)}}
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution:  ownRequired.DeepCopy(),
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{ownTerm},
		}}
		return pod
	}
	eviction := func(owner, node string, expires time.Time) policyv1alpha1.RecentEviction {
		return policyv1alpha1.RecentEviction{Pod: owner + "-x", PodUID: types.UID("uid-" + owner + "-x"), OwnerKind: "ReplicaSet",
			OwnerName: owner, Node: node, Container: "web", Time: metav1.NewTime(expires.Add(-10 * time.Minute)), Expires: metav1.NewTime(expires)}
	}
	policyWithEvictions := func(name string, selector map[string]string, entries ...policyv1alpha1.RecentEviction) {
		GinkgoHelper()
		p := &policyv1alpha1.EnhancedLivenessPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       policyv1alpha1.EnhancedLivenessPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: selector}},
		}
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		p.Status.RecentEvictions = entries
		Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
	}
	expectNotSteered := func(pod *corev1.Pod) {
		GinkgoHelper()
		expectEnrolled(pod)
		Expect(pod.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationAvoidedNodes))
		Expect(pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution).To(Equal([]corev1.PreferredSchedulingTerm{ownTerm}))
		Expect(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution).To(Equal(ownRequired))
	}

	BeforeAll(func() {
		ensureNamespace(ns)
		now := time.Now()
		// A policy that does not select the pods; written first, so that once the cache has the
		// second policy's status (an informer delivers in order), it has this one too.
		policyWithEvictions("billing", map[string]string{"app": "billing"}, eviction("web-other-policy", "node-d", now.Add(time.Hour)))
		policyWithEvictions("shop", map[string]string{"app": "shop"},
			eviction("web-1", "node-c", now.Add(time.Hour)),
			eviction("web-1", "node-a", now.Add(time.Hour)),
			eviction("web-old", "node-a", now.Add(-time.Minute)))
		Eventually(func(g Gomega) {
			pod := ownedPod(ns, "web-1")
			g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
			g.Expect(pod.Annotations).To(HaveKey(appsv1alpha1.AnnotationAvoidedNodes))
		}).Should(Succeed(), "the manager's cache has the policy's status")
	})

	It("prefers other nodes for a new pod of the evicted pods' controller, keeping the pod's own affinity", func() {
		pod := ownedPod(ns, "web-1")
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectEnrolled(pod)
		Expect(pod.Annotations).To(HaveKeyWithValue(appsv1alpha1.AnnotationAvoidedNodes, "node-a,node-c"))
		na := pod.Spec.Affinity.NodeAffinity
		Expect(na.RequiredDuringSchedulingIgnoredDuringExecution).To(Equal(ownRequired), "required, never more")
		Expect(na.PreferredDuringSchedulingIgnoredDuringExecution).To(Equal([]corev1.PreferredSchedulingTerm{ownTerm, {
			Weight: 100, Preference: corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-a"}},
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-c"}},
			}},
		}}))
	})

	It("leaves a pod of another controller as it is", func() {
		pod := ownedPod(ns, "web-2")
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectNotSteered(pod)
	})

	It("leaves a pod of a controller of the same name in another namespace as it is", func() {
		ensureNamespace("pods-steer-other")
		pod := ownedPod("pods-steer-other", "web-1")
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectNotSteered(pod)
	})

	It("leaves a pod as it is when its controller's eviction has expired", func() {
		pod := ownedPod(ns, "web-old")
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectNotSteered(pod)
	})

	It("leaves a pod as it is when the policy that lists its controller's eviction does not select it", func() {
		pod := ownedPod(ns, "web-other-policy")
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectNotSteered(pod)
	})

	It("leaves a pod already bound to a node (spec.nodeName) as it is", func() {
		pod := ownedPod(ns, "web-1")
		pod.Spec.NodeName = "node-a"
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectNotSteered(pod)
	})

	It("leaves a pod without a controller as it is", func() {
		pod := ownedPod(ns, "web-1")
		pod.OwnerReferences[0].Controller = nil
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectNotSteered(pod)
	})
})
