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

package decision

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/apiclock"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// status.recentEvictions: the decision records each eviction in the status of the policies that
// asked for it, before the Eviction API is called; the status controller keeps the entries until
// they expire; a new leader reads them back.
var _ = Describe("Decision controller, status.recentEvictions", func() {
	recent := func(pol *policyv1alpha1.EnhancedLivenessPolicy) func() []policyv1alpha1.RecentEviction {
		return func() []policyv1alpha1.RecentEviction { return policyStatus(pol)().RecentEvictions }
	}

	It("records an eviction in its policy's status, and the policy's status writes keep it", func() {
		stop := startManager(testConfig())
		defer stop()
		before := time.Now()
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(gone(a), wait, poll).Should(BeTrue(), "the pod was not evicted")
		Eventually(recent(pol), wait, poll).Should(HaveLen(1))
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
		Eventually(func() int64 { return policyStatus(pol)().ObservedGeneration }, wait, poll).Should(Equal(pol.Generation + 1))
		Consistently(recent(pol), 2*testConfig().StatusResyncInterval, poll).Should(ConsistOf(e))
		Expect(events(ns, a.Name)).NotTo(ContainElement(ContainSubstring("not steered")))
	})

	It("lists in each policy only its own evictions", func() {
		stop := startManager(testConfig())
		defer stop()
		_, pol1, a1 := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		_, pol2, a2 := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(gone(a1), wait, poll).Should(BeTrue())
		Eventually(gone(a2), wait, poll).Should(BeTrue())
		uid := func(e policyv1alpha1.RecentEviction) string { return string(e.PodUID) }
		Eventually(recent(pol1), wait, poll).Should(ConsistOf(WithTransform(uid, Equal(string(a1.UID)))))
		Eventually(recent(pol2), wait, poll).Should(ConsistOf(WithTransform(uid, Equal(string(a2.UID)))))
	})

	It("drops an entry once it has expired, and keeps the others", func() {
		stop := startManager(testConfig())
		defer stop()
		ns := newNamespace()
		pol := createPolicy(ns, "move", nil)
		Eventually(func() int64 { return policyStatus(pol)().ObservedGeneration }, wait, poll).Should(Equal(pol.Generation))
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
		Consistently(recent(pol), 2*time.Second, poll).Should(HaveLen(2), "an entry dropped before it expired")
		Eventually(recent(pol), wait, poll).Should(ConsistOf(HaveField("Pod", "lasting")))
		Consistently(recent(pol), 2*testConfig().StatusResyncInterval, poll).Should(ConsistOf(HaveField("Pod", "lasting")))
	})

	It("does not evict again, as a new leader, a pod its policy's status records", func() {
		refused := promtestutil.ToFloat64(evictions.WithLabelValues(resultRefused))
		stop := startManager(testConfig())
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, fullBudget)
		Eventually(func() float64 { return promtestutil.ToFloat64(evictions.WithLabelValues(resultRefused)) }, wait, poll).
			Should(Equal(refused + 1))
		Eventually(recent(pol), wait, poll).Should(ConsistOf(HaveField("PodUID", a.UID)))
		e := recent(pol)()[0]
		stop()

		By("a new leader, its memory empty: the pod restarted once more does not help, and it is held, not evicted")
		stop = startManager(testConfig())
		defer stop()
		node := a.Spec.NodeName
		renewLease(node, time.Now())
		report(node, []*corev1.Pod{a}, failed(a, "app", 2))
		Eventually(crrPods, wait, poll).WithArguments(ns).Should(HaveLen(2))
		finish(ns, a, 3)
		report(node, []*corev1.Pod{a}, failed(a, "app", 3))
		Eventually(heldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), wait, poll).Should(ContainElement(And(
			ContainSubstring("restarting it is not helping (policy "+ns+"/move); its eviction was tried at "+stamp(e.Time.Time)),
			ContainSubstring("(recorded in status.recentEvictions of policy "+ns+"/move until "+stamp(e.Expires.Time)+", whatever the answer was)"))))
		Consistently(gone(a), quiet, poll).Should(BeFalse())
		Expect(promtestutil.ToFloat64(evictions.WithLabelValues(resultRefused))).To(Equal(refused+1), "evicted again")
	})

	It("never forgets an eviction that has not expired: a pod beyond 16 is held, and no new leader evicts a pod twice", func() {
		refused := promtestutil.ToFloat64(evictions.WithLabelValues(resultRefused))
		stop := startManager(testConfig())
		ns := newNamespace()
		labels := map[string]string{"app": "web"}
		b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(3)), Selector: &metav1.LabelSelector{MatchLabels: labels}}}
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		b.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: b.Generation, CurrentHealthy: 3, DesiredHealthy: 3, ExpectedPods: 3}
		Expect(k8sClient.Status().Update(ctx, b)).To(Succeed())
		pol := createPolicy(ns, "move", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.RestartEffectiveness = policyv1alpha1.RestartEffectiveness{MinIneffective: 1, Action: policyv1alpha1.IneffectiveEvict}
		})
		rs := deployment(ns, "web", 3, labels)
		nodeA, nodeB, nodeC := newNode(), newNode(), newNode()
		a := createPod(ns, "web-a", nodeA, podOpts{owner: rs, labels: labels})
		p := createPod(ns, "web-b", nodeB, podOpts{owner: rs, labels: labels})
		c := createPod(ns, "web-c", nodeC, podOpts{owner: rs, labels: labels})
		report(nodeB, []*corev1.Pod{p}, succeeded(p, "app", 1))
		lemonOn := func(pod *corev1.Pod, node string) {
			report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
			Eventually(crrPods, wait, poll).WithArguments(ns).Should(ContainElement(pod.Name))
			finish(ns, pod, 2)
			report(node, []*corev1.Pod{pod}, failed(pod, "app", 2))
		}

		By("web-a's eviction is tried (the budget refuses it) and recorded")
		lemonOn(a, nodeA)
		Eventually(recent(pol), wait, poll).Should(ConsistOf(HaveField("PodUID", a.UID)))
		Eventually(func() float64 { return promtestutil.ToFloat64(evictions.WithLabelValues(resultRefused)) }, wait, poll).Should(Equal(refused + 1))
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
		Eventually(recent(pol), wait, poll).Should(HaveLen(16))

		By("web-c, the 17th, is held, saying why, and nothing is dropped")
		lemonOn(c, nodeC)
		Eventually(heldEvents(ns, c.Name, policyv1alpha1.HoldRestartIneffective), wait, poll).Should(ContainElement(
			ContainSubstring("not evicted: status.recentEvictions of policy " + ns + "/move keeps 16 evictions that have not expired, the most it records; the next may be tried at " +
				stamp(first.Expires.Time) + ", when the first expires")))
		Consistently(recent(pol), quiet, poll).Should(ContainElement(first))
		Expect(withPrefix(ns, c.Name, EventEvictionRefused)()).To(BeEmpty())
		report(nodeC, []*corev1.Pod{c}, succeeded(c, "app", 2)) // it recovers: no restart of it takes web-a's budget
		stop()

		By("a new leader, its memory empty: web-a, whose restarts still do not help, is held by its record, not evicted again")
		stop = startManager(testConfig())
		defer stop()
		renewLease(nodeA, time.Now())
		report(nodeA, []*corev1.Pod{a}, failed(a, "app", 2))
		Eventually(func() []string {
			var out []string
			for _, n := range crrPods(ns) {
				if n == a.Name {
					out = append(out, n)
				}
			}
			return out
		}, wait, poll).Should(HaveLen(2), "web-a restarted once more")
		finish(ns, a, 3)
		report(nodeA, []*corev1.Pod{a}, failed(a, "app", 3))
		Eventually(heldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), wait, poll).Should(ContainElement(
			ContainSubstring("its eviction was tried at " + stamp(first.Time.Time))))
		Consistently(func() float64 { return promtestutil.ToFloat64(evictions.WithLabelValues(resultRefused)) }, quiet, poll).
			Should(Equal(refused+1), "an eviction tried again within its window")
	})

	It("does not evict when the record it writes finds the list full (a cache behind the API server)", func() {
		ns := newNamespace()
		pol := createPolicy(ns, "move", nil)
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
		r := &DecisionReconciler{Client: k8sClient, api: k8sClient, evictClient: k8sClient, clock: clock.RealClock{},
			cfg: Config{evictTimeout: evictTimeout, APIClock: apiclock.New(clock.RealClock{})}}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-a", UID: "uid-web-a"}, Spec: corev1.PodSpec{NodeName: "node-a"}}
		d := rules.Decision{Policies: rules.Governing{{Key: rules.PolicyKey{Namespace: ns, Name: "move"},
			Breaker: rules.RestartBreaker{Enabled: true, MinIneffective: 1, Window: 10 * time.Minute, Evict: true}}},
			Failure: rules.Failure{Container: "app"}, Seen: rules.Seen{At: now}}
		notSteered, isFull := r.recordEviction(ctx, pod, d)
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
		_, isFull = r.recordEviction(ctx, pod, d)
		Expect(isFull).To(BeFalse())
		Expect(recent(pol)()).To(And(HaveLen(16), ContainElement(HaveField("PodUID", pod.UID)), Not(ContainElement(HaveField("Pod", "other-15")))))
	})

	It("evicts anyway when the record cannot be written, and says the replacement is not steered", func() {
		c := testConfig()
		c.evictClient = intercepted(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				if _, ok := obj.(*policyv1alpha1.EnhancedLivenessPolicy); ok && sub == "status" {
					return errors.New("refused by the test")
				}
				return cl.SubResource(sub).Patch(ctx, obj, p, opts...)
			}})
		stop := startManager(c)
		defer stop()
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(gone(a), wait, poll).Should(BeTrue(), "the pod was not evicted")
		want := ContainElement(And(HavePrefix(EventEvicted+": evicted pod "+ns+"/web-a"),
			HaveSuffix("; its replacement is not steered away from node "+a.Spec.NodeName+
				": writing status.recentEvictions of policy "+ns+"/move failed: refused by the test")))
		Eventually(func() []string { return events(ns, a.Name) }, wait, poll).Should(want)
		Eventually(func() []string { return events(ns, pol.Name) }, wait, poll).Should(want)
		Expect(recent(pol)()).To(BeEmpty())
	})

	It("takes the entry back when the API server was not reached", func() {
		var calls atomic.Int32
		tried, resume := make(chan struct{}), make(chan struct{})
		c := testConfig()
		c.evictClient = intercepted(interceptor.Funcs{
			SubResourceCreate: func(ctx context.Context, cl client.Client, sub string, obj, sr client.Object, opts ...client.SubResourceCreateOption) error {
				if sub == "eviction" && calls.Add(1) == 1 {
					close(tried)
					<-resume
					return errors.New("dial tcp: connection refused (the test)")
				}
				return cl.SubResource(sub).Create(ctx, obj, sr, opts...)
			}})
		stop := startManager(c)
		defer stop()
		_, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(tried, wait, poll).Should(BeClosed())
		Expect(recent(pol)()).To(ConsistOf(HaveField("PodUID", a.UID)), "recorded before the call")
		By("the container passes again before the next try: no eviction, and no entry left to steer or hold by")
		report(a.Spec.NodeName, []*corev1.Pod{a}, succeeded(a, "app", 2))
		close(resume)
		Eventually(recent(pol), wait, poll).Should(BeEmpty())
		Consistently(recent(pol), quiet, poll).Should(BeEmpty())
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
