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

package v1alpha1

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

var _ = Describe("EnhancedLivenessPolicy validating webhook", Ordered, func() {
	const ns = "policy-webhook"
	var n int
	newPolicy := func(mutate func(*policyv1alpha1.EnhancedLivenessPolicySpec)) *policyv1alpha1.EnhancedLivenessPolicy {
		n++
		p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p-%d", n)}}
		mutate(&p.Spec)
		return p
	}

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	It("admits a complete, valid policy", func() {
		p := newPolicy(func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}
			s.Blacklist = &policyv1alpha1.Blacklist{
				Workloads:   []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "legacy"}, {APIVersion: "v1", Kind: "Pod", Name: "pet"}},
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fragile": "true"}},
				Containers:  []string{"log-shipper"},
			}
		})
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		By("and an update that keeps it valid")
		p.Spec.Mode = policyv1alpha1.ModeDryRun
		Expect(k8sClient.Update(ctx, p)).To(Succeed())
	})

	DescribeTable("rejects what the schema cannot express, naming the field and the rule",
		func(mutate func(*policyv1alpha1.EnhancedLivenessPolicySpec), field, rule string) {
			err := k8sClient.Create(ctx, newPolicy(mutate))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			Expect(err.Error()).To(And(ContainSubstring(field), ContainSubstring(rule)))
		},
		Entry("a selector operator that does not exist", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near", Values: []string{"web"}}}}
		}, "spec.selector.matchExpressions[0].operator", "not a valid selector operator"),
		Entry("an In selector without values", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn}}}
		}, "spec.selector.matchExpressions[0].values", "must be specified when `operator` is 'In' or 'NotIn'"),
		Entry("a blacklist podSelector with an invalid label key", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "x"}}}
		}, "spec.blacklist.podSelector.matchLabels", "name part must consist of alphanumeric characters"),
		Entry("a blacklist workload apiVersion with two slashes", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{Workloads: []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1/beta", Kind: "Deployment", Name: "x"}}}
		}, "spec.blacklist.workloads[0].apiVersion", "must be <group>/<version>"),
		Entry("a blacklist workload apiVersion without version", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{Workloads: []policyv1alpha1.WorkloadReference{{APIVersion: "apps/", Kind: "Deployment", Name: "x"}}}
		}, "spec.blacklist.workloads[0].apiVersion", "must be <group>/<version>"),
		Entry("a blacklist workload group that is not a DNS name", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{Workloads: []policyv1alpha1.WorkloadReference{{APIVersion: "Apps_Group/v1", Kind: "Deployment", Name: "x"}}}
		}, "spec.blacklist.workloads[0].apiVersion", "group: a lowercase RFC 1123 subdomain"),
		Entry("a blacklist workload kind in lower case", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{Workloads: []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1", Kind: "deployment", Name: "x"}}}
		}, "spec.blacklist.workloads[0].kind", "must be a Kind such as Deployment"),
		Entry("a blacklist workload name that is not a DNS name", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{Workloads: []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "Legacy_App"}}}
		}, "spec.blacklist.workloads[0].name", "a lowercase RFC 1123 subdomain"),
		Entry("a blacklist container name that cannot exist", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{Containers: []string{"Log_Shipper"}}
		}, "spec.blacklist.containers[0]", "a lowercase RFC 1123 label"),
	)

	It("rejects an update that breaks a valid policy", func() {
		p := newPolicy(func(*policyv1alpha1.EnhancedLivenessPolicySpec) {})
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		p.Spec.Blacklist = &policyv1alpha1.Blacklist{Containers: []string{"UPPER"}}
		err := k8sClient.Update(ctx, p)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("spec.blacklist.containers[0]"))
	})

	DescribeTable("warns about valid settings that are usually mistakes",
		func(mutate func(*policyv1alpha1.EnhancedLivenessPolicySpec), want string) {
			v := &EnhancedLivenessPolicyValidator{}
			w, err := v.ValidateCreate(ctx, newPolicy(mutate))
			Expect(err).NotTo(HaveOccurred())
			if want == "" {
				Expect(w).To(BeEmpty())
			} else {
				Expect(w).To(ContainElement(ContainSubstring(want)))
			}
		},
		Entry("maxFailing below maxUnavailable", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			mu, mf := intstr.FromString("50%"), intstr.FromString("25%")
			s.MaxUnavailable, s.MaxFailing = &mu, &mf
		}, "spec.maxFailing (25%) is below spec.maxUnavailable (50%)"),
		Entry("maxUnavailable 0", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			mu := intstr.FromInt32(0)
			s.MaxUnavailable = &mu
		}, "only pods that are already unavailable"),
		Entry("blacklisting a ReplicaSet", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{Workloads: []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc"}}}
		}, "blacklist the Deployment instead"),
		Entry("DryRun, the old name of Shadow", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Mode = policyv1alpha1.ModeDryRun
		}, "spec.mode: DryRun is deprecated: it is the old name of Shadow"),
		Entry("the defaults", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			mu, mf := intstr.FromString("25%"), intstr.FromString("50%")
			s.MaxUnavailable, s.MaxFailing = &mu, &mf
		}, ""),
	)

	It("warns that a new mode applies to the pods created from then on", func() {
		v := &EnhancedLivenessPolicyValidator{}
		enforce := newPolicy(func(*policyv1alpha1.EnhancedLivenessPolicySpec) {})
		shadow := enforce.DeepCopy()
		shadow.Spec.Mode = policyv1alpha1.ModeShadow
		for _, c := range []struct {
			from, to *policyv1alpha1.EnhancedLivenessPolicy
		}{{enforce, shadow}, {shadow, enforce}} {
			w, err := v.ValidateUpdate(ctx, c.from, c.to)
			Expect(err).NotTo(HaveOccurred())
			Expect(w).To(ContainElement(And(ContainSubstring("the pods running now keep the mode they were admitted in"),
				ContainSubstring("kubectl rollout restart"))))
		}
		dryRun := enforce.DeepCopy()
		dryRun.Spec.Mode = policyv1alpha1.ModeDryRun
		w, err := v.ValidateUpdate(ctx, dryRun, shadow)
		Expect(err).NotTo(HaveOccurred())
		Expect(w).To(BeEmpty(), "DryRun to Shadow changes no pod's mode")
	})

	It("allows every deletion", func() {
		v := &EnhancedLivenessPolicyValidator{}
		Expect(v.ValidateDelete(ctx, newPolicy(func(*policyv1alpha1.EnhancedLivenessPolicySpec) {}))).To(BeEmpty())
	})
})
