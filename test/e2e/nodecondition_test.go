//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// The Node condition from the evidence of restarts that do not help: set where the same
// workloads pass elsewhere, withheld where they fail on every node, and never left True by a
// manager that is gone.

// nodeConditionOf is the node's EnhancedLivenessNodeStorm condition, nil when it has none.
func nodeConditionOf(node string) *corev1.NodeCondition {
	var n corev1.Node
	Expect(k8s.Get(context.Background(), client.ObjectKey{Name: node}, &n)).To(Succeed())
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == "EnhancedLivenessNodeStorm" {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// nodeConditionReason is the condition's "status/reason" ("" when there is none).
func nodeConditionReason(node string) func() string {
	return func() string {
		if c := nodeConditionOf(node); c != nil {
			return fmt.Sprintf("%s/%s", c.Status, c.Reason)
		}
		return ""
	}
}

// ineffectiveFleet makes n namespaces, each with an enrolled 6-replica Deployment spread over
// both nodes (3 and 3) whose sickness survives a restart, under a policy whose breaker trips at the
// first restart that does not help. The storm breakers stay off: 2 failing pods of 6 are within
// maxFailing (3), and 3 of a node's 9 enrolled pods are no node storm.
func ineffectiveFleet(n int) []string {
	var nss []string
	for range n {
		ns := newNamespace("ineffective")
		createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{
			RestartEffectiveness: policyv1alpha1.RestartEffectiveness{MinIneffective: 1},
		})
		deployApp(ns, app{name: "web", replicas: 6, probe: httpProbe(), enrolled: true, stickySickness: true, spread: true})
		nss = append(nss, ns)
	}
	return nss
}

// sickOn makes one pod of the app in each namespace on the node sick for good and returns them.
func sickOn(nss []string, node string) []corev1.Pod {
	GinkgoHelper()
	var sick []corev1.Pod
	for _, ns := range nss {
		on := podsOn(ns, "web", node)
		Expect(on).To(HaveLen(3), "%s/web is spread 3 and 3", ns)
		setSick(on[0], true)
		sick = append(sick, on[0])
	}
	return sick
}

// heldIneffective waits until each pod was restarted (its restart did not help) and is held
// RestartIneffective.
func heldIneffective(pods []corev1.Pod) {
	GinkgoHelper()
	for _, p := range pods {
		Eventually(hasEvent(p.Namespace, p.Name, "RestartHeld", "", "RestartIneffective:")).
			WithTimeout(2*time.Minute).Should(BeTrue(), "%s/%s held RestartIneffective", p.Namespace, p.Name)
	}
}

// withheldSince: the node has had a NodeConditionWithheld event since start.
func withheldSince(node string, start metav1.Time) bool {
	for _, e := range eventsAbout("default", node) {
		if e.Reason == "NodeConditionWithheld" && !e.CreationTimestamp.Before(&start) {
			return true
		}
	}
	return false
}

var _ = Describe("restarts that do not help on node A, for workloads of three namespaces that pass on node B", Serial, func() {
	It("sets the Node condition on node A only, clears it when node A heals, and make undeploy sets it False", func() {
		nodeA, nodeB := twoNodes()
		nss := ineffectiveFleet(3)

		By(fmt.Sprintf("one pod of each workload on %s fails for good: 3 of its 9 enrolled pods, no storm", nodeA))
		start := time.Now()
		sick := sickOn(nss, nodeA)
		heldIneffective(sick)
		Eventually(nodeConditionReason(nodeA)).WithTimeout(90*time.Second).Should(Equal("True/RestartsIneffective"),
			"the evidence lasted 20 s")
		set := time.Since(start)
		cond := nodeConditionOf(nodeA)
		Expect(cond.Message).To(ContainSubstring("in 3 namespaces"))
		Expect(cond.Message).To(HaveSuffix("while those workloads pass on other nodes"))
		Expect(nodeConditionReason(nodeB)()).NotTo(HavePrefix("True"), "node B, where the workloads pass")
		for _, p := range sick {
			// One restart that did not help, and at most a canary since.
			Expect(restartCount(p.Namespace, p.Name)()).To(BeNumerically("<=", 2), "%s/%s restarts held", p.Namespace, p.Name)
		}

		By(fmt.Sprintf("%s heals: the holds end and the condition goes False", nodeA))
		for _, p := range sick {
			setSick(p, false)
		}
		start = time.Now()
		Eventually(nodeConditionReason(nodeA)).WithTimeout(2 * time.Minute).Should(Equal("False/NoNodeStorm"))
		var restarts int32
		for _, p := range sick {
			restarts += restartCount(p.Namespace, p.Name)()
		}
		appendStormReport("restarts that do not help on %s for 3 namespaces (3 of its 9 enrolled pods): condition True %s after the onset, %d restarts of the 3 sick pods; False %s after they healed",
			nodeA, set.Round(time.Second), restarts, time.Since(start).Round(time.Second))

		By(fmt.Sprintf("%s fails again: the breakers are still tripped, the condition is True again", nodeA))
		sickOn(nss, nodeA)
		Eventually(nodeConditionReason(nodeA)).WithTimeout(2 * time.Minute).Should(Equal("True/RestartsIneffective"))

		By("make undeploy: the manager goes first, and its leader sets the condition False before it exits")
		out, err := undeployOperator()
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(nodeConditionReason(nodeA)()).To(Equal("False/NotJudged"))
		Expect(nodeConditionOf(nodeA).Message).To(ContainSubstring("no enhanced-liveness manager judges this node"))

		By("the operator deployed again, for the specs that follow")
		deployOperator()
	})
})

var _ = Describe("restarts that do not help for workloads of three namespaces on both nodes at once", Serial, func() {
	It("sets the Node condition on neither: the cap withholds it from both", func() {
		nodeA, nodeB := twoNodes()
		nss := ineffectiveFleet(3)

		By("one pod of each workload on each node fails for good: 2 of 6, the other 4 pass")
		start := metav1.Now().Rfc3339Copy() // events have whole seconds
		sick := append(sickOn(nss, nodeA), sickOn(nss, nodeB)...)
		heldIneffective(sick)
		By("both nodes have the evidence: 2 nodes, more than 10 % of 2 (at least 1): neither gets it")
		for _, node := range []string{nodeA, nodeB} {
			Eventually(func(g Gomega) {
				g.Expect(withheldSince(node, start)).To(BeTrue(), "a NodeConditionWithheld event since the spec began")
				// A node that carries the condition (an earlier spec's) says why; one that never
				// had it gets none written.
				g.Expect(nodeConditionReason(node)()).To(Or(BeEmpty(), Equal("False/TooManyNodes")))
			}).WithTimeout(90*time.Second).Should(Succeed(), node)
		}
		Consistently(func(g Gomega) {
			for _, node := range []string{nodeA, nodeB} {
				g.Expect(nodeConditionReason(node)()).NotTo(HavePrefix("True"), node)
			}
		}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())

		By("the pods heal, before the next spec")
		for _, p := range sick {
			setSick(p, false)
		}
		for _, node := range []string{nodeA, nodeB} {
			Eventually(nodeConditionReason(node)).WithTimeout(2*time.Minute).Should(Or(BeEmpty(), Equal("False/NoNodeStorm")), node)
		}
	})
})

var _ = Describe("a held Deployment deleted with --cascade=orphan", func() {
	It("is gone at once: the garbage collector removes its owner reference from the RestartHold", func() {
		ns := newNamespace("orphan")
		d := deployApp(ns, app{name: "web", replicas: 3, probe: httpProbe(), enrolled: true, stickySickness: true})
		By("every pod fails for good: a failure storm, its hold recorded in a RestartHold the Deployment owns")
		for _, p := range appPods(ns, "web") {
			setSick(p, true)
		}
		var hold *policyv1alpha1.RestartHold
		Eventually(func() *policyv1alpha1.RestartHold { hold = restartHoldOf(ns, "web", appContainer); return hold }).
			WithTimeout(90 * time.Second).ShouldNot(BeNil())
		Expect(hold.OwnerReferences).To(ContainElement(HaveField("UID", d.UID)))

		By("kubectl delete deployment web --cascade=orphan")
		Expect(k8s.Delete(context.Background(), d, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(context.Background(), client.ObjectKeyFromObject(d), &appsv1.Deployment{}))
		}).WithTimeout(60*time.Second).Should(BeTrue(), "the Deployment is gone")
		Eventually(func(g Gomega) {
			h := &policyv1alpha1.RestartHold{}
			err := k8s.Get(context.Background(), client.ObjectKeyFromObject(hold), h)
			if apierrors.IsNotFound(err) {
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(h.OwnerReferences).NotTo(ContainElement(HaveField("UID", d.UID)), "orphaned, not owned")
		}).WithTimeout(60 * time.Second).Should(Succeed())
		Expect(appPods(ns, "web")).To(HaveLen(3), "the pods stay, orphaned with their ReplicaSet")
	})
})
