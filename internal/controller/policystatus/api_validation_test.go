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
	"os"
	"path/filepath"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// These specs prove the EnhancedLivenessPolicy schema (OpenAPI + CEL) against the real apiserver,
// with no webhook running.

var _ = Describe("policy.enhancedliveness.io CRD validation", Ordered, func() {
	const ns = "elp-validation"

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})).To(Succeed())
	})

	It("accepts the sample in config/samples", func() {
		data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "config", "samples", "policy_v1alpha1_enhancedlivenesspolicy.yaml"))
		Expect(err).NotTo(HaveOccurred())
		p := &policyv1alpha1.EnhancedLivenessPolicy{}
		Expect(yaml.UnmarshalStrict(data, p)).To(Succeed())
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
	})

	It("accepts the RestartHold sample in config/samples", func() {
		data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "config", "samples", "policy_v1alpha1_restarthold.yaml"))
		Expect(err).NotTo(HaveOccurred())
		h := &policyv1alpha1.RestartHold{}
		Expect(yaml.UnmarshalStrict(data, h)).To(Succeed())
		Expect(k8sClient.Create(ctx, h)).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(h), h)).To(Succeed())
		Expect(h.Status.Wait).To(Equal(&metav1.Duration{Duration: time.Minute}))
	})

	It("applies the documented defaults to an empty policy", func() {
		p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns}}
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		Expect(p.Spec.Mode).To(Equal(policyv1alpha1.ModeEnforce))
		Expect(p.Spec.RateLimit).To(Equal(policyv1alpha1.RateLimit{RestartsPerMinute: 6, Burst: 3}))
		Expect(p.Spec.MaxUnavailable).To(BeNil(), "unset: the pods' PodDisruptionBudget, else --default-max-unavailable")
		Expect(p.Spec.MaxFailing).To(Equal(ptr.To(intstr.FromString("50%"))))
		Expect(p.Spec.Enroll).To(BeFalse())
		Expect(p.Spec.MaxHold).To(Equal(&metav1.Duration{Duration: 10 * time.Minute}))
		Expect(p.Spec.RestartEffectiveness.Action).To(Equal(policyv1alpha1.IneffectiveHold), "eviction is opt-in")
	})

	It("accepts restartEffectiveness.action Evict with the breaker enforced", func() {
		p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Name: "evict", Namespace: ns}}
		p.Spec.RestartEffectiveness.Action = policyv1alpha1.IneffectiveEvict
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		Expect(p.Spec.RestartEffectiveness.Mode).To(Equal(policyv1alpha1.BreakerEnforce))
	})

	It("accepts maxHold 0s (never) and the edges of its range", func() {
		for _, d := range []time.Duration{0, time.Minute, 24 * time.Hour} {
			p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{GenerateName: "hold-", Namespace: ns}}
			p.Spec.MaxHold = &metav1.Duration{Duration: d}
			Expect(k8sClient.Create(ctx, p)).To(Succeed(), "maxHold %s", d)
		}
	})

	It("accepts integer and percent budgets at the edges", func() {
		for i, v := range []intstr.IntOrString{intstr.FromInt32(0), intstr.FromInt32(7), intstr.FromString("0%"), intstr.FromString("100%"), intstr.FromString("5%")} {
			p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{GenerateName: "edge-", Namespace: ns}}
			p.Spec.MaxUnavailable, p.Spec.MaxFailing = ptr.To(v), ptr.To(v)
			Expect(k8sClient.Create(ctx, p)).To(Succeed(), "value %d: %s", i, v.String())
		}
	})

	DescribeTable("rejects an invalid policy",
		func(mutate func(*policyv1alpha1.EnhancedLivenessPolicy), want ...string) {
			p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns}}
			mutate(p)
			err := k8sClient.Create(ctx, p)
			Expect(err).To(HaveOccurred(), "the apiserver accepted an invalid policy")
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}
		},
		Entry("unknown mode", func(p *policyv1alpha1.EnhancedLivenessPolicy) { p.Spec.Mode = "Off" },
			"spec.mode", `Unsupported value: "Off"`),
		Entry("maxUnavailable over 100%", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.MaxUnavailable = ptr.To(intstr.FromString("150%"))
		}, "spec.maxUnavailable", "must be an integer >= 0 or a percent from 0% to 100%"),
		Entry("negative maxUnavailable", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(-1))
		}, "spec.maxUnavailable", "must be an integer >= 0 or a percent from 0% to 100%"),
		Entry("maxFailing that is not a number", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.MaxFailing = ptr.To(intstr.FromString("half"))
		}, "spec.maxFailing", "must be an integer >= 0 or a percent from 0% to 100%"),
		Entry("maxFailing with a fractional percent", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.MaxFailing = ptr.To(intstr.FromString("12.5%"))
		}, "spec.maxFailing", "must be an integer >= 0 or a percent"),
		Entry("zero restartsPerMinute", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: -2, Burst: 1}
		}, "spec.rateLimit.restartsPerMinute", "should be greater than or equal to 1"),
		Entry("negative burst", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: 1, Burst: -1}
		}, "spec.rateLimit.burst", "should be greater than or equal to 1"),
		Entry("blacklisted workload without kind", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.Blacklist = &policyv1alpha1.Blacklist{Workloads: []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1", Name: "legacy"}}}
		}, "spec.blacklist.workloads[0].kind", "should be at least 1 chars long"),
		Entry("blacklisted container with an empty name", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.Blacklist = &policyv1alpha1.Blacklist{Containers: []string{""}}
		}, "spec.blacklist.containers[0]", "at least 1 chars long"),
		Entry("maxHold under a minute", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.MaxHold = &metav1.Duration{Duration: 30 * time.Second}
		}, "spec.maxHold", "maxHold must be 0s (doubt holds never end) or between 1m and 24h"),
		Entry("maxHold over a day", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.MaxHold = &metav1.Duration{Duration: 25 * time.Hour}
		}, "spec.maxHold", "maxHold must be 0s (doubt holds never end) or between 1m and 24h"),
		Entry("unknown restartEffectiveness.action", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.RestartEffectiveness.Action = "Delete"
		}, "spec.restartEffectiveness.action", `Unsupported value: "Delete"`),
		Entry("action Evict with the breaker disabled", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.RestartEffectiveness = policyv1alpha1.RestartEffectiveness{Mode: policyv1alpha1.BreakerDisabled, Action: policyv1alpha1.IneffectiveEvict}
		}, "spec.restartEffectiveness", "action Evict needs mode Enforce"),
		Entry("blacklisted container listed twice", func(p *policyv1alpha1.EnhancedLivenessPolicy) {
			p.Spec.Blacklist = &policyv1alpha1.Blacklist{Containers: []string{"app", "app"}}
		}, "spec.blacklist.containers[1]", "Duplicate value"),
	)

	It("writes policy status only through the status subresource", func() {
		p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Name: "status", Namespace: ns}}
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		p.Status.EnrolledPods = 5
		Expect(k8sClient.Update(ctx, p)).To(Succeed())
		got := &policyv1alpha1.EnhancedLivenessPolicy{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
		Expect(got.Status.EnrolledPods).To(BeZero(), "status changed through the main resource")

		got.Status.EnrolledPods = 5
		Expect(k8sClient.Status().Update(ctx, got)).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
		Expect(got.Status.EnrolledPods).To(Equal(int32(5)))
	})

	It("takes every hold reason in the status, DryRun of 0.1.0 too, and no other", func() {
		p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Name: "reasons", Namespace: ns}}
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		for i, r := range append(slices.Clone(policyv1alpha1.HoldReasons), policyv1alpha1.HoldDryRun) {
			p.Status.HeldByReason = append(p.Status.HeldByReason, policyv1alpha1.HeldCount{Reason: r, Count: int64(i + 1)})
			p.Status.Workloads = append(p.Status.Workloads, policyv1alpha1.WorkloadSummary{HeldReason: r,
				Workload: policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: string(r)}})
		}
		Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
		Expect(p.Status.HeldByReason).To(HaveLen(10))

		bad := p.DeepCopy()
		bad.Status.HeldByReason = append(bad.Status.HeldByReason, policyv1alpha1.HeldCount{Reason: "Tired", Count: 1})
		err := k8sClient.Status().Update(ctx, bad)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(And(ContainSubstring("status.heldByReason[10].reason"), ContainSubstring(`Unsupported value: "Tired"`)))
		bad = p.DeepCopy()
		bad.Status.Workloads[0].HeldReason = "Tired"
		err = k8sClient.Status().Update(ctx, bad)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(And(ContainSubstring("status.workloads[0].heldReason"), ContainSubstring(`Unsupported value: "Tired"`)))
	})
})
