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

package nodestorm_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/nodestorm"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/nodecondition"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

var _ = Describe("Decision controller, the Node condition of a node storm", Ordered, func() {
	var stop func()
	c0 := dt.TestConfig()
	// Two workloads failing on a node of two pods are a node storm; each workload's own failing
	// pod is within its maxFailing (1 of 2).
	c0.NodeStorm = rules2NodeStorm()
	c0.NodeConditionInterval = 200 * time.Millisecond
	BeforeAll(func() { stop = dt.StartManager(c0) })
	AfterAll(func() { stop() })

	// node creates a Node object for a node name with a daemon Lease (newNode).
	node := func() string {
		n := dt.NewNode()
		obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		// The kubelet's own condition, which the manager's patches must leave alone.
		obj.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
		Expect(k8sClient.Status().Update(ctx, obj)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed()) })
		return n
	}
	condition := func(n string) func() *corev1.NodeCondition {
		return func() *corev1.NodeCondition {
			obj := &corev1.Node{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: n}, obj)).To(Succeed())
			for i := range obj.Status.Conditions {
				if obj.Status.Conditions[i].Type == nodecondition.Type {
					return &obj.Status.Conditions[i]
				}
			}
			return nil
		}
	}
	status := func(n string) func() corev1.ConditionStatus {
		return func() corev1.ConditionStatus {
			if c := condition(n)(); c != nil {
				return c.Status
			}
			return ""
		}
	}
	// pair creates a two-replica Deployment in ns with one pod on a and one on b.
	pair := func(ns, name, a, b string) (onA, onB *corev1.Pod) {
		rs := dt.Deployment(ns, name, 2, map[string]string{"app": name})
		return dt.CreatePod(ns, name+"-a", a, dt.PodOpts{Owner: rs}), dt.CreatePod(ns, name+"-b", b, dt.PodOpts{Owner: rs})
	}

	It("is set on the node where two namespaces' pods are held NodeStorm while they pass elsewhere, set False when the manager stops, judged again by the next, and cleared", func() {
		ns1, ns2 := dt.NewNamespace(), dt.NewNamespace()
		a, b, c, d := node(), node(), node(), node()
		web1A, web1B := pair(ns1, "web", a, b)
		web2A, web2B := pair(ns2, "web", a, b)
		dt.ReportProbes(b, []*corev1.Pod{web1B, web2B}, dt.Succeeded(web1B, "app", 1), dt.Succeeded(web2B, "app", 1))
		dt.ReportProbes(a, []*corev1.Pod{web1A, web2A}, dt.Failed(web1A, "app", 1), dt.Failed(web2A, "app", 1))
		Eventually(dt.HeldEvents(ns1, web1A.Name, policyv1alpha1.HoldNodeStorm), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Eventually(status(a), dt.Wait, dt.Poll).Should(Equal(corev1.ConditionTrue))
		cond := condition(a)()
		Expect(cond.Reason).To(Equal(nodecondition.ReasonHeld))
		Expect(cond.Message).To(ContainSubstring("restarts of 2 pods of 2 workloads in 2 namespaces (%s: 1, %s: 1) are held NodeStorm on node %s since ",
			min(ns1, ns2), max(ns1, ns2), a))
		Expect(status(b)()).To(BeEmpty())
		Eventually(func() []string { return dt.Events("default", a) }, dt.Wait, dt.Poll).
			Should(ContainElement(HavePrefix(nodestorm.EventNodeStormHeld + ": ")))
		Expect(promtestutil.ToFloat64(nodestorm.NodeStormNodes)).To(Equal(1.0))
		Expect(dt.CRRCount(ns1)()).To(BeZero())
		Expect(readyOf(a)).To(Equal(corev1.ConditionTrue), "the kubelet's condition stays beside it")

		By("the manager stops: nothing judges the node, the condition is False before it has exited")
		stop()
		stop = func() {}
		cond = condition(a)()
		Expect(cond.Status).To(Equal(corev1.ConditionFalse))
		Expect(cond.Reason).To(Equal(nodecondition.ReasonNotJudged))
		Expect(cond.Message).To(Equal("no enhanced-liveness manager judges this node: the leader that set the condition stopped"))
		// The NotJudged event is not asserted: the manager's event broadcaster stops with it, so
		// the event of its last write may be dropped (docs/reference.md); the condition is what
		// remediation reads.
		Expect(readyOf(a)).To(Equal(corev1.ConditionTrue))

		By("a manager that crashed left it True on another node; the next manager judges both anew")
		crashed := nodecondition.Judge(c, []nodecondition.Held{
			{Namespace: ns1, Reason: policyv1alpha1.HoldNodeStorm, PassingElsewhere: 1},
			{Namespace: ns2, Reason: policyv1alpha1.HoldNodeStorm, PassingElsewhere: 1}})
		left, _ := nodecondition.Next(nil, crashed, time.Now())
		patchCondition(c, left)
		By("and one that stopped left another node NotJudged")
		notJudged, _ := nodecondition.Next([]corev1.NodeCondition{*condition(a)()}, nodecondition.NotJudged(), time.Now())
		patchCondition(d, notJudged)
		stop = dt.StartManager(c0)
		Eventually(status(a), dt.Wait, dt.Poll).Should(Equal(corev1.ConditionTrue))
		Expect(condition(a)().Reason).To(Equal(nodecondition.ReasonHeld))
		Expect(condition(a)().LastHeartbeatTime.Time).To(BeTemporally("~", time.Now(), 10*time.Second))
		Eventually(status(c), c0.HoldRecheckInterval+dt.Wait, dt.Poll).Should(Equal(corev1.ConditionFalse))
		Expect(condition(c)().Reason).To(Equal(nodecondition.ReasonNone))
		Eventually(func() string { return condition(d)().Reason }, c0.HoldRecheckInterval+dt.Wait, dt.Poll).
			Should(Equal(nodecondition.ReasonNone), "a manager judges it again: NotJudged no longer says the truth")

		By("the storm ends: the condition goes False, with an event")
		dt.ReportProbes(a, []*corev1.Pod{web1A, web2A}, dt.Succeeded(web1A, "app", 1), dt.Succeeded(web2A, "app", 1))
		Eventually(status(a), dt.Wait, dt.Poll).Should(Equal(corev1.ConditionFalse))
		Expect(condition(a)().Reason).To(Equal(nodecondition.ReasonNone))
		Eventually(func() []string { return dt.Events("default", a) }, dt.Wait, dt.Poll).Should(ContainElement(HavePrefix(nodestorm.EventNoNodeStorm + ": ")))
		Expect(promtestutil.ToFloat64(nodestorm.NodeStormNodes)).To(BeZero())
		Expect(readyOf(a)).To(Equal(corev1.ConditionTrue))
		Expect(status(b)()).To(BeEmpty())
	})

	It("is set on the node where restarts do not help for three namespaces' workloads that pass on another node", func() {
		// As measured on two real nodes: a node-local dependency fails for 4 of node A's 7
		// enrolled pods, which is no node storm (not more than half), and their restarts do not
		// help there; here 3 of 6.
		nss := []string{dt.NewNamespace(), dt.NewNamespace(), dt.NewNamespace()}
		a, b := node(), node()
		var onA, onB []*corev1.Pod
		var failing []dt.ProbeState
		namespaces := map[string]*corev1.Pod{}
		for _, ns := range nss {
			dt.CreatePolicy(ns, "once", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
				s.RestartEffectiveness = policyv1alpha1.RestartEffectiveness{MinIneffective: 1}
			})
			webA, webB := pair(ns, "web", a, b)
			onA, onB = append(onA, webA), append(onB, webB)
			failing = append(failing, dt.Failed(webA, "app", 1))
			namespaces[ns] = webA
		}
		others := dt.NewNamespace()
		var passing []dt.ProbeState
		for i := range 3 {
			p := dt.CreatePod(others, fmt.Sprintf("single-%d", i), a, dt.PodOpts{})
			onA, passing = append(onA, p), append(passing, dt.Succeeded(p, "app", 1))
		}
		var passingB []dt.ProbeState
		for _, p := range onB {
			passingB = append(passingB, dt.Succeeded(p, "app", 1))
		}
		dt.ReportProbes(b, onB, passingB...)
		dt.ReportProbes(a, onA, append(failing, passing...)...)

		By("each pod on node A is restarted once, and fails again soon")
		for ns, p := range namespaces {
			Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf(p.Name))
			dt.Finish(ns, p, 2)
		}
		failing = failing[:0]
		for _, p := range namespaces {
			failing = append(failing, dt.Failed(p, "app", 2))
		}
		dt.ReportProbes(a, onA, append(failing, passing...)...)
		for ns, p := range namespaces {
			Eventually(dt.HeldEvents(ns, p.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		}
		Eventually(status(a), dt.Wait, dt.Poll).Should(Equal(corev1.ConditionTrue))
		cond := condition(a)()
		Expect(cond.Reason).To(Equal(nodecondition.ReasonIneffective))
		names := slices.Sorted(maps.Keys(namespaces))
		Expect(cond.Message).To(And(
			HavePrefix("restarts did not help on node %s for 3 pods of 3 workloads in 3 namespaces (%s/Deployment/web, %s/Deployment/web, %s/Deployment/web), held RestartIneffective since ",
				a, names[0], names[1], names[2]),
			HaveSuffix(", while those workloads pass on other nodes")))
		// The event is sent after the condition is written, asynchronously.
		Eventually(func() []string { return dt.Events("default", a) }, dt.Wait, dt.Poll).
			Should(ContainElement(HavePrefix(nodestorm.EventRestartsIneffective + ": ")))
		Expect(status(b)()).To(BeEmpty())
		for ns := range namespaces {
			Expect(dt.HeldEvents(ns, namespaces[ns].Name, policyv1alpha1.HoldNodeStorm)()).To(BeEmpty(), "no node storm")
			Expect(dt.CRRs(ns)).To(HaveLen(1))
		}
	})

	It("is never set by one namespace's pods, however many workloads", func() {
		ns := dt.NewNamespace()
		a, b := node(), node()
		web1A, web1B := pair(ns, "web1", a, b)
		web2A, web2B := pair(ns, "web2", a, b)
		dt.ReportProbes(b, []*corev1.Pod{web1B, web2B}, dt.Succeeded(web1B, "app", 1), dt.Succeeded(web2B, "app", 1))
		dt.ReportProbes(a, []*corev1.Pod{web1A, web2A}, dt.Failed(web1A, "app", 1), dt.Failed(web2A, "app", 1))
		Eventually(dt.HeldEvents(ns, web2A.Name, policyv1alpha1.HoldNodeStorm), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Consistently(status(a), dt.Quiet, dt.Poll).Should(BeEmpty())
	})

	It("is never set when the held workloads fail on the other nodes too", func() {
		ns1, ns2 := dt.NewNamespace(), dt.NewNamespace()
		// web1 failing on both nodes is within its policy's maxFailing: no FailureStorm, so its
		// pod on a is held NodeStorm beside web2's, and only web1's failing elsewhere keeps a
		// second namespace out of the evidence.
		pol := dt.CreatePolicy(ns1, "tolerant", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxFailing = new(intstr.FromString("100%"))
		})
		Eventually(func() int64 { return dt.PolicyStatus(pol)().ObservedGeneration }, dt.Wait, dt.Poll).Should(Equal(pol.Generation))
		a, b := node(), node()
		web1A, web1B := pair(ns1, "web", a, b)
		web2A, web2B := pair(ns2, "web", a, b)
		// b: one of its two pods failing is no storm there; web1's pod there fails too.
		dt.ReportProbes(b, []*corev1.Pod{web1B, web2B}, dt.Failed(web1B, "app", 1), dt.Succeeded(web2B, "app", 1))
		dt.ReportProbes(a, []*corev1.Pod{web1A, web2A}, dt.Failed(web1A, "app", 1), dt.Failed(web2A, "app", 1))
		Eventually(dt.HeldEvents(ns1, web1A.Name, policyv1alpha1.HoldNodeStorm), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Eventually(dt.HeldEvents(ns2, web2A.Name, policyv1alpha1.HoldNodeStorm), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Consistently(status(a), dt.Quiet, dt.Poll).Should(BeEmpty())
	})
})

// rules2NodeStorm: more than half of a node's pods failing, in two workloads or more.
func rules2NodeStorm() rules.NodeStormRule {
	return rules.NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 2}
}

// patchCondition writes a Node condition as the manager does (a strategic merge patch of it).
func patchCondition(n string, cond corev1.NodeCondition) {
	data, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	Expect(err).NotTo(HaveOccurred())
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
	Expect(k8sClient.Status().Patch(ctx, obj, client.RawPatch(types.StrategicMergePatchType, data))).To(Succeed())
}

// readyOf returns the status of the node's Ready condition.
func readyOf(n string) corev1.ConditionStatus {
	obj := &corev1.Node{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: n}, obj)).To(Succeed())
	for _, c := range obj.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}
