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
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// A pod that an eviction cannot move (its replacement is made on the same node) or whose eviction
// costs more than its failure is held for its restarts, visibly, never evicted, though its
// container passes on another node.
var _ = Describe("Decision controller, restartEffectiveness.action Evict, pods that cannot move", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	held := func(owner func(ns string) client.Object, why string) {
		GinkgoHelper()
		before := promtestutil.ToFloat64(restart.RestartsHeld.WithLabelValues(string(policyv1alpha1.HoldRestartIneffective)))
		ns, pol, a := lemonOf(owner)
		Eventually(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(
			ContainSubstring("restarting it is not helping (policy " + ns + "/move); not evicted: " + why)))
		Eventually(func() int64 { return dt.HeldCount(dt.PolicyStatus(pol)(), policyv1alpha1.HoldRestartIneffective) }, dt.Wait, dt.Poll).
			Should(BeNumerically(">=", 1))
		Expect(promtestutil.ToFloat64(restart.RestartsHeld.WithLabelValues(string(policyv1alpha1.HoldRestartIneffective)))).
			To(BeNumerically(">", before))
		Consistently(gone(a), dt.Quiet, dt.Poll).Should(BeFalse())
		Expect(withPrefix(ns, a.Name, restart.EventEvicted)()).To(BeEmpty())
		Expect(dt.PolicyStatus(pol)().RecentEvictions).To(BeEmpty())
	}

	It("holds a DaemonSet's pod: its replacement is made on the same node", func() {
		held(func(ns string) client.Object {
			labels := map[string]string{"app": "agent"}
			return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"}, Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/agent:1"}}}}}}
		}, "a DaemonSet pod cannot move to another node")
	})

	It("holds a Job's pod: its eviction counts against the Job's backoffLimit", func() {
		held(func(ns string) client.Object {
			return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backup"}, Spec: batchv1.JobSpec{
				Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](2),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/backup:1"}}}}}}
		}, "a Job pod's eviction counts against its backoffLimit")
	})
})

// lemonOf is lemon for the pods of another controller, which owner makes in ns: its pod "a" on
// node A fails, is restarted, and fails again at once, while its pod "b" passes on node B; the
// policy says Evict (minIneffective 1).
func lemonOf(owner func(ns string) client.Object) (ns string, pol *policyv1alpha1.EnhancedLivenessPolicy, a *corev1.Pod) {
	GinkgoHelper()
	ns = dt.NewNamespace()
	o := owner(ns)
	Expect(k8sClient.Create(ctx, o)).To(Succeed())
	gvk, err := k8sClient.GroupVersionKindFor(o)
	Expect(err).NotTo(HaveOccurred())
	nodeA, nodeB := dt.NewNode(), dt.NewNode()
	pol = dt.CreatePolicy(ns, "move", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
		s.RestartEffectiveness = policyv1alpha1.RestartEffectiveness{MinIneffective: 1, Action: policyv1alpha1.IneffectiveEvict}
	})
	ref := metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: o.GetName(), UID: o.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	owned := dt.PodOpts{Labels: map[string]string{"app": o.GetName()}, Mutate: func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{ref} }}
	a = dt.CreatePod(ns, o.GetName()+"-a", nodeA, owned)
	b := dt.CreatePod(ns, o.GetName()+"-b", nodeB, owned)
	dt.ReportProbes(nodeB, []*corev1.Pod{b}, dt.Succeeded(b, "app", 1))
	dt.ReportProbes(nodeA, []*corev1.Pod{a}, dt.Failed(a, "app", 1))
	Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf(a.Name))
	dt.Finish(ns, a, 2)
	dt.ReportProbes(nodeA, []*corev1.Pod{a}, dt.Failed(a, "app", 2))
	return ns, pol, a
}
