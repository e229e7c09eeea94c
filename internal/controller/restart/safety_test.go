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

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Workloads other than long-running Deployments.
var _ = Describe("Decision controller on other workloads", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	It("counts a Job's finished pods nowhere", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		dt.CreatePolicy(ns, "jobs", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.MaxUnavailable = dt.Pct("25%") })
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "batch"},
			Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](8),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}}}
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		var pods []*corev1.Pod
		for i := range 4 {
			p := dt.CreatePod(ns, fmt.Sprintf("batch-%d", i), node, dt.PodOpts{})
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			Expect(k8sClient.Update(ctx, p)).To(Succeed())
			pods = append(pods, p)
		}
		// Two pods have completed: not Ready, never again running.
		for _, p := range pods[:2] {
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			p.Status.Phase = corev1.PodSucceeded
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"}}
			Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
		}
		// Counting them, 2 of 4 pods would be unavailable (> 25%) and every restart held forever.
		dt.ReportProbes(node, pods, dt.Failed(pods[2], "app", 1))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("batch-2"))
	})
})

// The budget holds for the whole restart, however long its grace period.
var _ = Describe("Decision controller with a long grace period", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	It("never has 2 of 3 pods down with maxUnavailable 1 and a 900 s grace period", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		one := intstr.FromInt32(1)
		dt.CreatePolicy(ns, "one-down", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = &one, dt.Pct("100%")
		})
		labels := map[string]string{"app": "slow"}
		rs := dt.Deployment(ns, "slow", 3, labels)
		var pods []*corev1.Pod
		for i := range 3 {
			// The pods' grace period is 900 s (the probe sets none, see noProbeGrace).
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("slow-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels,
				Mutate: func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](900) }}))
		}
		a, b := pods[0], pods[1]
		reportAll := func(states ...dt.ProbeState) { dt.ReportWith(node, pods, dt.NoProbeGrace, states...) }
		reportAll(dt.Failed(a, "app", 1))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("slow-0"))
		crr := dt.CRRs(ns)[0]
		Expect(crr.Spec.ActiveDeadlineSeconds).To(HaveValue(BeNumerically(">=", 900+appsv1alpha1.RestartMarginSeconds)),
			"the deadline covers the grace period")

		By("the daemon stops a's container; the app takes its grace period; the request ends meanwhile")
		crr.Status.Phase = appsv1alpha1.RecreateFailed
		crr.Status.ContainerRecreateStates = []appsv1alpha1.ContainerRecreateState{{Name: "app",
			Phase: appsv1alpha1.RecreateFailed, IsKilled: true, ContainerID: dt.ContainerID(a, "app", 1)}}
		Expect(k8sClient.Status().Update(ctx, &crr)).To(Succeed())
		// a still runs its stopped instance and still reads Ready: it is not back.
		reportAll(dt.Failed(a, "app", 1), dt.Failed(b, "app", 1))
		Eventually(dt.HeldEvents(ns, b.Name, policyv1alpha1.HoldMaxUnavailable), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Consistently(dt.CRRPods, dt.Quiet, dt.Poll).WithArguments(ns).Should(ConsistOf("slow-0"))

		By("a's new container runs but is not ready yet: still not back")
		dt.SetRunning(a, 2, false)
		reportAll(dt.Succeeded(a, "app", 2), dt.Failed(b, "app", 1))
		Consistently(dt.CRRPods, dt.Quiet, dt.Poll).WithArguments(ns).Should(ConsistOf("slow-0"))

		By("a is ready again: b's turn")
		dt.SetRunning(a, 2, true)
		reportAll(dt.Succeeded(a, "app", 2), dt.Failed(b, "app", 1))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("slow-0", "slow-1"))
	})
})

// A stop that has begun and not returned keeps its request's budget, whatever the request's
// phase: a second stop, of this container or of a sibling, waits until the first returned.
var _ = Describe("Decision controller with a stop in flight", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	It("keeps the budget taken, and the request in place, until the daemon's stop returned", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		one := intstr.FromInt32(1)
		dt.CreatePolicy(ns, "one-down", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = &one, dt.Pct("100%")
		})
		labels := map[string]string{"app": "hung"}
		rs := dt.Deployment(ns, "hung", 3, labels)
		var pods []*corev1.Pod
		for i := range 3 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("hung-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels}))
		}
		a, b := pods[0], pods[1]
		dt.ReportProbes(node, pods, dt.Failed(a, "app", 1))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("hung-0"))
		first := dt.CRRs(ns)[0]
		setStatus := func(inFlight bool, message string) {
			GinkgoHelper()
			crr := &appsv1alpha1.ContainerRecreateRequest{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(&first), crr)).To(Succeed())
			crr.Status.Phase, crr.Status.Message = appsv1alpha1.RecreateFailed, "the request did not finish within its active deadline"
			crr.Status.CompletionTime = ptr.To(metav1.Now())
			crr.Status.ContainerRecreateStates = []appsv1alpha1.ContainerRecreateState{{Name: "app",
				Phase: appsv1alpha1.RecreateRecreating, ContainerID: dt.ContainerID(a, "app", 1), StopInFlight: inFlight, Message: message}}
			Expect(k8sClient.Status().Update(ctx, crr)).To(Succeed())
		}

		By("the request is failed while the daemon's stop of a's container has not returned (containerd hangs)")
		setStatus(true, "stopping "+dt.ContainerID(a, "app", 1))
		// a still reads Ready and still fails; b fails too.
		dt.ReportProbes(node, pods, dt.Failed(a, "app", 1), dt.Failed(b, "app", 1))
		Eventually(dt.HeldEvents(ns, b.Name, policyv1alpha1.HoldMaxUnavailable), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Consistently(func(g Gomega) {
			list := dt.CRRs(ns)
			g.Expect(list).To(HaveLen(1))
			g.Expect(list[0].UID).To(Equal(first.UID), "the request whose stop is in flight is not replaced")
		}, dt.Quiet, dt.Poll).Should(Succeed())

		By("the stop returned with the runtime's timeout, and a's probe passes again: b's turn")
		setStatus(false, "stopping "+dt.ContainerID(a, "app", 1)+" failed, will retry: context deadline exceeded")
		dt.ReportProbes(node, pods, dt.Succeeded(a, "app", 1), dt.Failed(b, "app", 1))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("hung-0", "hung-1"))
	})
})

// A workload is its real top owner, of any kind: here a CRD of this test that owns ReplicaSets,
// as an Argo Rollout does.
var _ = Describe("Decision controller on a custom workload kind", Ordered, func() {
	var stop func()
	rolloutGVK := schema.GroupVersionKind{Group: "rollouts.test.enhancedliveness.io", Version: "v1", Kind: "Rollout"}
	BeforeAll(func() {
		installRolloutCRD()
		stop = dt.StartManager(dt.TestConfig())
	})
	AfterAll(func() { stop() })

	// rollout creates a Rollout of replicas and, under it, a stable and a canary ReplicaSet with
	// pods pods each.
	rollout := func(ns, name string, replicas int32, pods int) (*unstructured.Unstructured, []*corev1.Pod) {
		r := &unstructured.Unstructured{}
		r.SetGroupVersionKind(rolloutGVK)
		r.SetNamespace(ns)
		r.SetName(name)
		Expect(unstructured.SetNestedField(r.Object, int64(replicas), "spec", "replicas")).To(Succeed())
		Expect(k8sClient.Create(ctx, r)).To(Succeed())
		node := dt.NewNode()
		var out []*corev1.Pod
		for _, track := range []string{"stable", "canary"} {
			labels := map[string]string{"app": name, "track": track}
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-" + track,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: rolloutGVK.GroupVersion().String(), Kind: "Rollout",
					Name: name, UID: r.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(pods)), Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}}}
			Expect(k8sClient.Create(ctx, rs)).To(Succeed())
			for i := range pods {
				out = append(out, dt.CreatePod(ns, fmt.Sprintf("%s-%s-%d", name, track, i), node,
					dt.PodOpts{Owner: rs, Labels: labels}))
			}
		}
		return r, out
	}

	It("shares one budget between a Rollout's canary and stable ReplicaSets, sized by its /scale", func() {
		ns := dt.NewNamespace()
		dt.CreatePolicy(ns, "quarter", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = dt.Pct("25%"), dt.Pct("100%")
		})
		_, pods := rollout(ns, "shop", 4, 2)
		// One failing pod in each ReplicaSet: 25% of the Rollout's 4 replicas is 1 restart. Each
		// ReplicaSet counted as its own workload of 2 would allow one each.
		dt.ReportProbes(pods[0].Spec.NodeName, pods, dt.Failed(pods[0], "app", 1), dt.Failed(pods[2], "app", 1))
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1))
		held := pods[2]
		if dt.CRRs(ns)[0].Spec.PodName == pods[2].Name {
			held = pods[0]
		}
		Eventually(dt.HeldEvents(ns, held.Name, policyv1alpha1.HoldMaxUnavailable), dt.Wait, dt.Poll).Should(ConsistOf(
			ContainSubstring("of 4 pods of Rollout/shop are unavailable")))
	})

	It("never restarts a blacklisted Rollout", func() {
		ns := dt.NewNamespace()
		dt.CreatePolicy(ns, "keep-off", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{Workloads: []policyv1alpha1.WorkloadReference{
				{APIVersion: rolloutGVK.GroupVersion().String(), Kind: "Rollout", Name: "legacy"}}}
		})
		_, pods := rollout(ns, "legacy", 2, 1)
		dt.ReportProbes(pods[0].Spec.NodeName, pods, dt.Failed(pods[1], "app", 1))
		Eventually(dt.HeldEvents(ns, pods[1].Name, policyv1alpha1.HoldBlacklisted), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
	})
})

// installRolloutCRD installs a namespaced Rollout kind with a /scale subresource, as Argo
// Rollouts ships one.
func installRolloutCRD() {
	GinkgoHelper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "rollouts.rollouts.test.enhancedliveness.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "rollouts.test.enhancedliveness.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "rollouts", Singular: "rollout", Kind: "Rollout", ListKind: "RolloutList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale: &apiextensionsv1.CustomResourceSubresourceScale{
						SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}},
			}},
		},
	}
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}})
	Expect(err).NotTo(HaveOccurred())
}
