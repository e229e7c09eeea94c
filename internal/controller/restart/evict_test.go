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
	"strings"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// envtest has no kube-scheduler, kubelet nor disruption controller: an accepted eviction leaves
// the pod terminating (no kubelet finishes it), and a PodDisruptionBudget whose status no
// controller wrote answers every eviction of the pods it selects with a 429 asking for a retry in
// 10 s (evict_timeout_test.go); the specs here write the budget's status as that controller would.
var _ = Describe("Decision controller, restartEffectiveness.action Evict", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	It("evicts a pod whose restarts do not help while its container passes on another node", func() {
		evicted := promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultEvicted))
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(gone(a), dt.Wait, dt.Poll).Should(BeTrue(), "the pod was not evicted")
		want := ContainElement(And(HavePrefix(restart.EventEvicted+": evicted pod "+ns+"/web-a (container app, "),
			ContainSubstring("while container app passes in 1 pod(s) of Deployment/web on other nodes: evicting it"),
			HaveSuffix("; the canary of the held restarts of container app of Deployment/web: no other of its pods is restarted or evicted until it is gone")))
		Eventually(func() []string { return dt.Events(ns, a.Name) }, dt.Wait, dt.Poll).Should(want)
		Eventually(func() []string { return dt.Events(ns, pol.Name) }, dt.Wait, dt.Poll).Should(want)
		Expect(promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultEvicted))).To(Equal(evicted + 1))
		Eventually(func() *policyv1alpha1.HoldCanary {
			return dt.RestartHold(ns, "Deployment", "web", "app")().Status.Canary
		}, dt.Wait, dt.Poll).
			Should(And(Not(BeNil()), HaveField("Evicted", true), HaveField("Pod", a.Name)), "the eviction is the canary of its container's hold")
		Expect(dt.CRRs(ns)).To(HaveLen(1), "a restart was requested beside the eviction")
		Expect(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective)()).To(BeEmpty())
	})

	It("holds the pod, visibly, when a PodDisruptionBudget refuses its eviction", func() {
		refused := promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, fullBudget)
		Eventually(withPrefix(ns, a.Name, restart.EventEvictionRefused+": "), dt.Wait, dt.Poll).Should(ContainElement(And(
			ContainSubstring("the eviction of pod "+ns+"/web-a (container app, node "),
			ContainSubstring("was refused: PodDisruptionBudget: Cannot evict pod as it would violate the pod's disruption budget."),
			ContainSubstring("The disruption budget web needs 2 healthy pods and has 2 currently"))))
		Eventually(withPrefix(ns, pol.Name, restart.EventEvictionRefused+": "), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Expect(promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))).To(Equal(refused + 1))
		Eventually(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(And(
			ContainSubstring("restarting it is not helping (policy "+ns+"/move); its eviction was refused at "),
			ContainSubstring("The disruption budget web"), ContainSubstring("the next may be tried at "))))
		Consistently(gone(a), dt.Quiet, dt.Poll).Should(BeFalse())
		Expect(promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))).To(Equal(refused+1), "tried again within the window")
		Expect(dt.CRRs(ns)).To(HaveLen(1))
	})

	It("never evicts with action Hold (the default)", func() {
		ns, _, a := lemon("", false, noBudget)
		Eventually(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(
			HaveSuffix(")"))) // the breaker's message, with nothing about an eviction
		Expect(strings.Join(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective)(), "\n")).NotTo(ContainSubstring("evict"))
		Consistently(gone(a), dt.Quiet, dt.Poll).Should(BeFalse())
		Expect(withPrefix(ns, a.Name, restart.EventEvicted)()).To(BeEmpty())
	})

	It("never evicts when no pod of the workload passes on another node", func() {
		ns, _, a := lemon(policyv1alpha1.IneffectiveEvict, true, noBudget)
		Eventually(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(
			ContainSubstring("not evicted: no pod of Deployment/web passes container app on another node")))
		Consistently(gone(a), dt.Quiet, dt.Poll).Should(BeFalse())
		Expect(withPrefix(ns, a.Name, restart.EventEvicted)()).To(BeEmpty())
	})
})

// budget is the PodDisruptionBudget lemon gives its Deployment.
type budget int

const (
	noBudget budget = iota
	// fullBudget has minAvailable 2 and the disruption controller's status: both pods healthy,
	// no disruption allowed.
	fullBudget
	// unprocessedBudget has minAvailable 2 and no status: the disruption controller never saw it.
	unprocessedBudget
)

// lemon sets up a two-replica Deployment in a new namespace, governed by a policy with action,
// its pod "a" on node A, and its sibling "b" on node B (or on A too when sameNode), with pdb; a's
// container fails, is restarted, and its new container fails again at once: its one restart did
// not help (minIneffective 1).
func lemon(action policyv1alpha1.IneffectiveAction, sameNode bool, pdb budget) (ns string, pol *policyv1alpha1.EnhancedLivenessPolicy, a *corev1.Pod) {
	ns = dt.NewNamespace()
	if pdb != noBudget {
		b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		if pdb == fullBudget {
			b.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: b.Generation, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}
			Expect(k8sClient.Status().Update(ctx, b)).To(Succeed())
		}
	}
	nodeA, nodeB := dt.NewNode(), dt.NewNode()
	if sameNode {
		nodeB = nodeA
	}
	pol = dt.CreatePolicy(ns, "move", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
		s.RestartEffectiveness = policyv1alpha1.RestartEffectiveness{MinIneffective: 1, Action: action}
		// Explicit, so that the PodDisruptionBudget (none down of 2) guards the eviction only: it
		// would otherwise hold the first restart too.
		s.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	})
	labels := map[string]string{"app": "web"}
	rs := dt.Deployment(ns, "web", 2, labels)
	a = dt.CreatePod(ns, "web-a", nodeA, dt.PodOpts{Owner: rs, Labels: labels})
	b := dt.CreatePod(ns, "web-b", nodeB, dt.PodOpts{Owner: rs, Labels: labels})
	if sameNode {
		dt.ReportProbes(nodeA, []*corev1.Pod{a, b}, dt.Failed(a, "app", 1), dt.Succeeded(b, "app", 1))
	} else {
		dt.ReportProbes(nodeB, []*corev1.Pod{b}, dt.Succeeded(b, "app", 1))
		dt.ReportProbes(nodeA, []*corev1.Pod{a}, dt.Failed(a, "app", 1))
	}
	Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("web-a"))
	dt.Finish(ns, a, 2)
	if sameNode {
		dt.ReportProbes(nodeA, []*corev1.Pod{a, b}, dt.Failed(a, "app", 2), dt.Succeeded(b, "app", 1))
	} else {
		dt.ReportProbes(nodeA, []*corev1.Pod{a}, dt.Failed(a, "app", 2))
	}
	return ns, pol, a
}

// gone reports whether p is deleted or being deleted (no kubelet finishes an accepted eviction).
func gone(p *corev1.Pod) func() bool {
	return func() bool {
		got := &corev1.Pod{}
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(p), got)
		return apierrors.IsNotFound(err) || err == nil && got.DeletionTimestamp != nil
	}
}

// withPrefix returns the events about obj whose "reason: message" starts with prefix.
func withPrefix(ns, obj, prefix string) func() []string {
	return func() []string {
		var out []string
		for _, e := range dt.Events(ns, obj) {
			if strings.HasPrefix(e, prefix) {
				out = append(out, e)
			}
		}
		return out
	}
}
