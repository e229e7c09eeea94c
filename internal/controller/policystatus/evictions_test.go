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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/policystatus"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"
)

// The eviction record the decision writes before an eviction (Evictions.Record), against a policy
// whose status.recentEvictions is already full.
var _ = Describe("Policy status, status.recentEvictions written for the decision", func() {
	recent := func(pol *policyv1alpha1.EnhancedLivenessPolicy) func() []policyv1alpha1.RecentEviction {
		return func() []policyv1alpha1.RecentEviction { return dt.PolicyStatus(pol)().RecentEvictions }
	}

	It("does not evict when the record it writes finds the list full (a cache behind the API server)", func() {
		ns := dt.NewNamespace()
		pol := dt.CreatePolicy(ns, "move", nil)
		now := time.Now()
		full := make([]policyv1alpha1.RecentEviction, 16)
		for i := range full {
			full[i] = policyv1alpha1.RecentEviction{Pod: fmt.Sprint("other-", i), PodUID: types.UID(fmt.Sprint("uid-other-", i)),
				Node: "node-x", Container: "app", Time: metav1.NewTime(now), Expires: metav1.NewTime(now.Add(time.Hour))}
		}
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &policyv1alpha1.EnhancedLivenessPolicy{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pol), got); err != nil {
				return err
			}
			got.Status.RecentEvictions = full
			return k8sClient.Status().Update(ctx, got)
		})).To(Succeed())
		r := policystatus.NewEvictions(k8sClient, k8sClient, k8sClient, policystatus.Options{WriteTimeout: restart.DefaultEvictTimeout,
			Clock: clock.RealClock{}, APIClock: apiclock.New(clock.RealClock{})})
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-a", UID: "uid-web-a"}, Spec: corev1.PodSpec{NodeName: "node-a"}}
		d := rules.Decision{Policies: rules.Governing{{Key: rules.PolicyKey{Namespace: ns, Name: "move"},
			Breaker: rules.RestartBreaker{Enabled: true, MinIneffective: 1, Window: 10 * time.Minute, Evict: true}}},
			Failure: rules.Failure{Container: "app"}, Seen: rules.Seen{At: now}}
		notSteered, isFull := r.Record(ctx, pod, d)
		Expect(isFull).To(BeTrue())
		Expect(notSteered).To(BeEmpty())
		Expect(recent(pol)()).To(HaveLen(16))
		Expect(recent(pol)()).NotTo(ContainElement(HaveField("PodUID", pod.UID)))

		By("once an entry has expired, the eviction is recorded in its place")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &policyv1alpha1.EnhancedLivenessPolicy{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pol), got); err != nil {
				return err
			}
			got.Status.RecentEvictions[15].Expires = metav1.NewTime(now.Add(-time.Second))
			return k8sClient.Status().Update(ctx, got)
		})).To(Succeed())
		_, isFull = r.Record(ctx, pod, d)
		Expect(isFull).To(BeFalse())
		Expect(recent(pol)()).To(And(HaveLen(16), ContainElement(HaveField("PodUID", pod.UID)), Not(ContainElement(HaveField("Pod", "other-15")))))
	})
})
