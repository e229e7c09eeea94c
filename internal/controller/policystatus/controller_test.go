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

package policystatus_test

import (
	"time"

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

var _ = Describe("Policy status controller", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	// The status controller remembers which workload a pod's ReplicaSet resolves to. A policy's
	// status sums up the held workloads of the pods it selects, also through pods that are not
	// failing themselves: here the only pod the policy selects never fails, its siblings (admitted
	// in Shadow mode) do, so a remembered workload gone stale would drop the summary.
	It("follows a ReplicaSet re-parented or left without its Deployment", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		rs := dt.Deployment(ns, "web", 3, map[string]string{"app": "web"})
		api := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: rs.Spec.Selector, Template: rs.Spec.Template}}
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		quietPol := dt.CreatePolicy(ns, "quiet", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "quiet"}}
		})
		dt.CreatePolicy(ns, "watch", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "fail"}}
			s.Mode = policyv1alpha1.ModeShadow
		})
		q := dt.CreatePod(ns, "web-q", node, dt.PodOpts{Owner: rs, Labels: map[string]string{"app": "web", "role": "quiet"}})
		f0 := dt.CreatePod(ns, "web-f0", node, dt.PodOpts{Owner: rs, Labels: dt.ShadowLabels(map[string]string{"app": "web", "role": "fail"})})
		f1 := dt.CreatePod(ns, "web-f1", node, dt.PodOpts{Owner: rs, Labels: dt.ShadowLabels(map[string]string{"app": "web", "role": "fail"})})
		pods := []*corev1.Pod{q, f0, f1}
		dt.ReportProbes(node, pods)
		summarised := func() []policyv1alpha1.WorkloadReference {
			var out []policyv1alpha1.WorkloadReference
			for _, w := range dt.PolicyStatus(quietPol)().Workloads {
				out = append(out, w.Workload)
			}
			return out
		}
		By("the quiet pod's workload is resolved (and remembered) while nothing is held")
		Eventually(dt.PolicyStatus(quietPol), dt.Wait, dt.Poll).Should(HaveField("EnrolledPods", int32(1)))
		// Past a refresh (StatusResyncInterval) after every object above was created.
		Consistently(summarised, 3*time.Second, dt.Poll).Should(BeEmpty())

		By("the ReplicaSet is adopted by the other Deployment, then its pods fail and are held")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(rs), rs)).To(Succeed())
		rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: api.Name, UID: api.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
		Expect(k8sClient.Update(ctx, rs)).To(Succeed())
		dt.ReportProbes(node, pods, dt.Succeeded(q, "app", 1), dt.Failed(f0, "app", 1), dt.Failed(f1, "app", 1))
		Eventually(summarised, dt.Wait, dt.Poll).Should(ConsistOf(
			policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"}))

		By("the Deployment is deleted (envtest has no garbage collector: the ReplicaSet stays, its top)")
		Expect(k8sClient.Delete(ctx, api)).To(Succeed())
		Eventually(summarised, dt.Wait, dt.Poll).Should(ConsistOf(
			policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name}))
	})
})
