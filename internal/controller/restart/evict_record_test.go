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
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// status.recentEvictions: the decision records each eviction in the status of the policies that
// asked for it, before the Eviction API is called; the status controller keeps the entries until
// they expire; a new leader reads them back.
var _ = Describe("Decision controller, status.recentEvictions", func() {
	recent := func(pol *policyv1alpha1.EnhancedLivenessPolicy) func() []policyv1alpha1.RecentEviction {
		return func() []policyv1alpha1.RecentEviction { return dt.PolicyStatus(pol)().RecentEvictions }
	}

	It("records an eviction in its policy's status, and the policy's status writes keep it", func() {
		stop := dt.StartManager(dt.TestConfig())
		defer stop()
		before := time.Now()
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(gone(a), dt.Wait, dt.Poll).Should(BeTrue(), "the pod was not evicted")
		Eventually(recent(pol), dt.Wait, dt.Poll).Should(HaveLen(1))
		e := recent(pol)()[0]
		owner := metav1.GetControllerOf(a)
		Expect(e).To(recentEvictionOf(a, owner))
		Expect(e.Time.Time).To(BeTemporally(">=", before.Truncate(time.Second)))
		Expect(e.Time.Time).To(BeTemporally("<=", time.Now()))
		Expect(e.Expires.Sub(e.Time.Time)).To(Equal(10*time.Minute), "expires: the time plus the policy's window")

		By("the policy changes: the status controller writes its status again, the entry stays")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &policyv1alpha1.EnhancedLivenessPolicy{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pol), got); err != nil {
				return err
			}
			got.Spec.MaxHold = &metav1.Duration{Duration: time.Hour}
			return k8sClient.Update(ctx, got)
		})).To(Succeed())
		Eventually(func() int64 { return dt.PolicyStatus(pol)().ObservedGeneration }, dt.Wait, dt.Poll).Should(Equal(pol.Generation + 1))
		Consistently(recent(pol), 2*dt.TestConfig().StatusResyncInterval, dt.Poll).Should(ConsistOf(e))
		Expect(dt.Events(ns, a.Name)).NotTo(ContainElement(ContainSubstring("not steered")))
	})

	It("lists in each policy only its own evictions", func() {
		stop := dt.StartManager(dt.TestConfig())
		defer stop()
		_, pol1, a1 := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		_, pol2, a2 := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(gone(a1), dt.Wait, dt.Poll).Should(BeTrue())
		Eventually(gone(a2), dt.Wait, dt.Poll).Should(BeTrue())
		uid := func(e policyv1alpha1.RecentEviction) string { return string(e.PodUID) }
		Eventually(recent(pol1), dt.Wait, dt.Poll).Should(ConsistOf(WithTransform(uid, Equal(string(a1.UID)))))
		Eventually(recent(pol2), dt.Wait, dt.Poll).Should(ConsistOf(WithTransform(uid, Equal(string(a2.UID)))))
	})

	It("drops an entry once it has expired, and keeps the others", func() {
		stop := dt.StartManager(dt.TestConfig())
		defer stop()
		ns := dt.NewNamespace()
		pol := dt.CreatePolicy(ns, "move", nil)
		Eventually(func() int64 { return dt.PolicyStatus(pol)().ObservedGeneration }, dt.Wait, dt.Poll).Should(Equal(pol.Generation))
		now := time.Now()
		entry := func(pod string, left time.Duration) policyv1alpha1.RecentEviction {
			return policyv1alpha1.RecentEviction{Pod: pod, PodUID: types.UID("uid-" + pod), OwnerKind: "ReplicaSet", OwnerName: "web-1",
				Node: "node-a", Container: "app", Time: metav1.NewTime(now), Expires: metav1.NewTime(now.Add(left))}
		}
		lasting, short := entry("lasting", time.Hour), entry("short", 4*time.Second)
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &policyv1alpha1.EnhancedLivenessPolicy{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pol), got); err != nil {
				return err
			}
			got.Status.RecentEvictions = []policyv1alpha1.RecentEviction{short, lasting}
			return k8sClient.Status().Update(ctx, got)
		})).To(Succeed())
		Consistently(recent(pol), 2*time.Second, dt.Poll).Should(HaveLen(2), "an entry dropped before it expired")
		Eventually(recent(pol), dt.Wait, dt.Poll).Should(ConsistOf(HaveField("Pod", "lasting")))
		Consistently(recent(pol), 2*dt.TestConfig().StatusResyncInterval, dt.Poll).Should(ConsistOf(HaveField("Pod", "lasting")))
	})

	It("does not evict again, as a new leader, a pod its policy's status records", func() {
		refused := promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))
		stop := dt.StartManager(dt.TestConfig())
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, fullBudget)
		Eventually(func() float64 {
			return promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))
		}, dt.Wait, dt.Poll).
			Should(Equal(refused + 1))
		Eventually(recent(pol), dt.Wait, dt.Poll).Should(ConsistOf(HaveField("PodUID", a.UID)))
		e := recent(pol)()[0]
		stop()

		By("a new leader, its memory empty: the pod restarted once more does not help, and it is held, not evicted")
		stop = dt.StartManager(dt.TestConfig())
		defer stop()
		node := a.Spec.NodeName
		dt.RenewLease(node, time.Now())
		dt.ReportProbes(node, []*corev1.Pod{a}, dt.Failed(a, "app", 2))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(HaveLen(2))
		dt.Finish(ns, a, 3)
		dt.ReportProbes(node, []*corev1.Pod{a}, dt.Failed(a, "app", 3))
		Eventually(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(And(
			ContainSubstring("restarting it is not helping (policy "+ns+"/move); its eviction was tried at "+stamp.Seconds(e.Time.Time)),
			ContainSubstring("(recorded in status.recentEvictions of policy "+ns+"/move until "+stamp.Seconds(e.Expires.Time)+", whatever the answer was)"))))
		Consistently(gone(a), dt.Quiet, dt.Poll).Should(BeFalse())
		Expect(promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))).To(Equal(refused+1), "evicted again")
	})

	It("never forgets an eviction that has not expired: a pod beyond 16 is held, and no new leader evicts a pod twice", func() {
		refused := promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))
		stop := dt.StartManager(dt.TestConfig())
		ns := dt.NewNamespace()
		labels := map[string]string{"app": "web"}
		b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(3)), Selector: &metav1.LabelSelector{MatchLabels: labels}}}
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		b.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: b.Generation, CurrentHealthy: 3, DesiredHealthy: 3, ExpectedPods: 3}
		Expect(k8sClient.Status().Update(ctx, b)).To(Succeed())
		pol := dt.CreatePolicy(ns, "move", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.RestartEffectiveness = policyv1alpha1.RestartEffectiveness{MinIneffective: 1, Action: policyv1alpha1.IneffectiveEvict}
			// Explicit, so that the PodDisruptionBudget guards the evictions only: it would
			// otherwise hold the restarts too.
			s.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		})
		rs := dt.Deployment(ns, "web", 3, labels)
		nodeA, nodeB, nodeC := dt.NewNode(), dt.NewNode(), dt.NewNode()
		a := dt.CreatePod(ns, "web-a", nodeA, dt.PodOpts{Owner: rs, Labels: labels})
		p := dt.CreatePod(ns, "web-b", nodeB, dt.PodOpts{Owner: rs, Labels: labels})
		c := dt.CreatePod(ns, "web-c", nodeC, dt.PodOpts{Owner: rs, Labels: labels})
		dt.ReportProbes(nodeB, []*corev1.Pod{p}, dt.Succeeded(p, "app", 1))
		lemonOn := func(pod *corev1.Pod, node string) {
			dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
			Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ContainElement(pod.Name))
			dt.Finish(ns, pod, 2)
			dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 2))
		}

		By("web-a's eviction is tried (the budget refuses it) and recorded")
		lemonOn(a, nodeA)
		Eventually(recent(pol), dt.Wait, dt.Poll).Should(ConsistOf(HaveField("PodUID", a.UID)))
		Eventually(func() float64 {
			return promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))
		}, dt.Wait, dt.Poll).Should(Equal(refused + 1))
		first := recent(pol)()[0]

		By("15 more evictions within the window: the list is full")
		now := time.Now()
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &policyv1alpha1.EnhancedLivenessPolicy{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pol), got); err != nil {
				return err
			}
			got.Status.RecentEvictions = nil
			for i := range 15 {
				got.Status.RecentEvictions = append(got.Status.RecentEvictions, policyv1alpha1.RecentEviction{Pod: fmt.Sprint("other-", i),
					PodUID: types.UID(fmt.Sprint("uid-other-", i)), OwnerKind: "ReplicaSet", OwnerName: rs.Name, Node: "node-x", Container: "app",
					Time: metav1.NewTime(now), Expires: metav1.NewTime(now.Add(time.Hour))})
			}
			got.Status.RecentEvictions = append(got.Status.RecentEvictions, first)
			return k8sClient.Status().Update(ctx, got)
		})).To(Succeed())
		Eventually(recent(pol), dt.Wait, dt.Poll).Should(HaveLen(16))

		By("web-c, the 17th, is held, saying why, and nothing is dropped")
		lemonOn(c, nodeC)
		Eventually(dt.HeldEvents(ns, c.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(
			ContainSubstring("not evicted: status.recentEvictions of policy " + ns + "/move keeps 16 evictions that have not expired, the most it records; the next may be tried at " +
				stamp.Seconds(first.Expires.Time) + ", when the first expires")))
		Consistently(recent(pol), dt.Quiet, dt.Poll).Should(ContainElement(first))
		Expect(withPrefix(ns, c.Name, restart.EventEvictionRefused)()).To(BeEmpty())
		dt.ReportProbes(nodeC, []*corev1.Pod{c}, dt.Succeeded(c, "app", 2)) // it recovers: no restart of it takes web-a's budget
		stop()

		By("a new leader, its memory empty: web-a, whose restarts still do not help, is held by its record, not evicted again")
		stop = dt.StartManager(dt.TestConfig())
		defer stop()
		dt.RenewLease(nodeA, time.Now())
		dt.ReportProbes(nodeA, []*corev1.Pod{a}, dt.Failed(a, "app", 2))
		Eventually(func() []string {
			var out []string
			for _, n := range dt.CRRPods(ns) {
				if n == a.Name {
					out = append(out, n)
				}
			}
			return out
		}, dt.Wait, dt.Poll).Should(HaveLen(2), "web-a restarted once more")
		dt.Finish(ns, a, 3)
		dt.ReportProbes(nodeA, []*corev1.Pod{a}, dt.Failed(a, "app", 3))
		Eventually(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(
			ContainSubstring("its eviction was tried at " + stamp.Seconds(first.Time.Time))))
		Consistently(func() float64 {
			return promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))
		}, dt.Quiet, dt.Poll).
			Should(Equal(refused+1), "an eviction tried again within its window")
	})

	It("evicts anyway when the record cannot be written, and says the replacement is not steered", func() {
		c := dt.TestConfig()
		c.Testing.EvictClient = intercepted(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				if _, ok := obj.(*policyv1alpha1.EnhancedLivenessPolicy); ok && sub == "status" {
					return errors.New("refused by the test")
				}
				return cl.SubResource(sub).Patch(ctx, obj, p, opts...)
			}})
		stop := dt.StartManager(c)
		defer stop()
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(gone(a), dt.Wait, dt.Poll).Should(BeTrue(), "the pod was not evicted")
		want := ContainElement(And(HavePrefix(restart.EventEvicted+": evicted pod "+ns+"/web-a"),
			HaveSuffix("; its replacement is not steered away from node "+a.Spec.NodeName+
				": writing status.recentEvictions of policy "+ns+"/move failed: refused by the test")))
		Eventually(func() []string { return dt.Events(ns, a.Name) }, dt.Wait, dt.Poll).Should(want)
		Eventually(func() []string { return dt.Events(ns, pol.Name) }, dt.Wait, dt.Poll).Should(want)
		Expect(recent(pol)()).To(BeEmpty())
	})

	It("takes the entry back when the API server was not reached", func() {
		var calls atomic.Int32
		tried, resume := make(chan struct{}), make(chan struct{})
		c := dt.TestConfig()
		c.Testing.EvictClient = intercepted(interceptor.Funcs{
			SubResourceCreate: func(ctx context.Context, cl client.Client, sub string, obj, sr client.Object, opts ...client.SubResourceCreateOption) error {
				if sub == "eviction" && calls.Add(1) == 1 {
					close(tried)
					<-resume
					return errors.New("dial tcp: connection refused (the test)")
				}
				return cl.SubResource(sub).Create(ctx, obj, sr, opts...)
			}})
		stop := dt.StartManager(c)
		defer stop()
		_, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(tried, dt.Wait, dt.Poll).Should(BeClosed())
		Expect(recent(pol)()).To(ConsistOf(HaveField("PodUID", a.UID)), "recorded before the call")
		By("the container passes again before the next try: no eviction, and no entry left to steer or hold by")
		dt.ReportProbes(a.Spec.NodeName, []*corev1.Pod{a}, dt.Succeeded(a, "app", 2))
		close(resume)
		Eventually(recent(pol), dt.Wait, dt.Poll).Should(BeEmpty())
		Consistently(recent(pol), dt.Quiet, dt.Poll).Should(BeEmpty())
		Expect(gone(a)()).To(BeFalse())
		Expect(calls.Load()).To(Equal(int32(1)))
	})
})

// intercepted is a client of the API server whose calls funcs may change.
func intercepted(funcs interceptor.Funcs) client.Client {
	GinkgoHelper()
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: k8sClient.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return interceptor.NewClient(direct, funcs)
}

// recentEvictionOf matches an entry of status.recentEvictions naming pod, controlled by owner.
func recentEvictionOf(pod *corev1.Pod, owner *metav1.OwnerReference) OmegaMatcher {
	return And(HaveField("Pod", pod.Name), HaveField("PodUID", pod.UID), HaveField("OwnerKind", "ReplicaSet"),
		HaveField("OwnerName", owner.Name), HaveField("Node", pod.Spec.NodeName), HaveField("Container", "app"))
}
