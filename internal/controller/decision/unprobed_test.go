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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// notProbed: the daemon does not run the pod's probe of container (its trust gate refused it).
func notProbed(pod *corev1.Pod, container string) probeState {
	return probeState{pod: pod, container: container, state: appsv1alpha1.ProbeNotProbed}
}

// listPodNotProbed plays the daemon that cannot name pod's probes (it has no such pod, its
// context does not decode): the node's report lists the pod itself not probed, with why.
func listPodNotProbed(node string, pod *corev1.Pod, why string) {
	GinkgoHelper()
	rep := &appsv1alpha1.NodePodProbeReport{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node}, rep)).To(Succeed())
	rep.Status.PodProbeStatuses = append(rep.Status.PodProbeStatuses,
		appsv1alpha1.PodProbeStatus{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, NotProbed: why})
	Expect(k8sClient.Status().Update(ctx, rep)).To(Succeed())
}

// unprobedGauge reads enhanced_liveness_unprobed_containers of namespace ns.
func unprobedGauge(ns string) func() float64 {
	return func() float64 { return promtestutil.ToFloat64(unprobedContainers.WithLabelValues(ns)) }
}

// notProbedEvents returns the pod's LivenessNotProbed events that contain saying. The filter
// matters: on a loaded machine a pod's report can land after the suite's 1 s grace, and the
// pod then also gets an event for that (no report, not mapped) before the cause under test.
func notProbedEvents(ns, podName, saying string) func() []string {
	return func() []string {
		var out []string
		for _, e := range events(ns, podName) {
			if strings.HasPrefix(e, EventLivenessNotProbed+": ") && strings.Contains(e, saying) {
				out = append(out, e)
			}
		}
		return out
	}
}

// The webhook moved an enrolled container's liveness probe to the operator: a container no daemon
// probes has none, and that is never silent, nor read as passing or as failed.
var _ = Describe("Unprobed containers", Ordered, func() {
	var stop func()
	BeforeAll(func() {
		c := testConfig()
		c.unprobedGrace = time.Second
		stop = startManager(c)
	})
	AfterAll(func() { stop() })

	It("counts a probe the daemon stopped running after it passed: policy status, metric, event, no restart", func() {
		ns, node := newNamespace(), newNode()
		pol := createPolicy(ns, "all", nil)
		a := createPod(ns, "a", node, podOpts{})
		b := createPod(ns, "b", node, podOpts{})
		pods := []*corev1.Pod{a, b}
		report(node, pods)
		Eventually(policyStatus(pol), wait, poll).Should(HaveField("EnrolledPods", int32(2)))
		Eventually(unprobedGauge(ns), wait, poll).Should(BeZero())
		Eventually(policyStatus(pol), wait, poll).Should(HaveField("UnprobedContainers", int32(0)))

		By("the daemon's trust gate refuses a's probe after it passed (its key was retired)")
		report(node, pods, notProbed(a, "app"))
		Eventually(policyStatus(pol), wait, poll).Should(And(HaveField("UnprobedContainers", int32(1)),
			HaveField("FailingContainers", int32(0))))
		Eventually(unprobedGauge(ns), wait, poll).Should(BeEquivalentTo(1))
		refused := "does not run probe"
		Eventually(notProbedEvents(ns, "a", refused), wait, poll).Should(ConsistOf(
			HavePrefix(EventLivenessNotProbed + ": 1 container(s) have no liveness probe running")))
		Expect(notProbedEvents(ns, "b", refused)()).To(BeEmpty())
		Expect(crrs(ns)).To(BeEmpty(), "not probed is no failure")

		By("the daemon probes it again")
		report(node, pods)
		Eventually(policyStatus(pol), wait, poll).Should(HaveField("UnprobedContainers", int32(0)))
		Eventually(unprobedGauge(ns), wait, poll).Should(BeZero())
	})

	It("counts every container of a pod whose probes the daemon cannot name", func() {
		ns, node := newNamespace(), newNode()
		pol := createPolicy(ns, "all", nil)
		a := createPod(ns, "a", node, podOpts{containers: []string{"app", "side"}})
		b := createPod(ns, "b", node, podOpts{})
		pods := []*corev1.Pod{a, b}
		report(node, pods)
		Eventually(policyStatus(pol), wait, poll).Should(HaveField("EnrolledPods", int32(2)))
		Eventually(unprobedGauge(ns), wait, poll).Should(BeZero())

		By("the daemon has no pod with a's UID: the report lists a itself not probed")
		listPodNotProbed(node, a, "pod-not-found: no pod with UID "+string(a.UID)+" on this node (yet)")
		Eventually(policyStatus(pol), wait, poll).Should(And(HaveField("UnprobedContainers", int32(2)),
			HaveField("FailingContainers", int32(0))))
		Eventually(unprobedGauge(ns), wait, poll).Should(BeEquivalentTo(2))
		Eventually(notProbedEvents(ns, "a", "pod-not-found"), wait, poll).Should(ContainElement(
			ContainSubstring("probes none of the pod's probes: pod-not-found: no pod with UID")))
		Expect(notProbedEvents(ns, "b", "pod-not-found")()).To(BeEmpty())
		Expect(crrs(ns)).To(BeEmpty(), "not probed is no failure")
	})

	It("counts the pods of a namespace the node's report leaves out, and only those", func() {
		noisy, quiet, node := newNamespace(), newNamespace(), newNode()
		noisyPol, quietPol := createPolicy(noisy, "all", nil), createPolicy(quiet, "all", nil)
		a := createPod(noisy, "a", node, podOpts{containers: []string{"app", "side"}})
		b := createPod(quiet, "b", node, podOpts{})
		report(node, []*corev1.Pod{a, b})
		Eventually(policyStatus(noisyPol), wait, poll).Should(HaveField("EnrolledPods", int32(1)))
		Eventually(policyStatus(quietPol), wait, poll).Should(HaveField("EnrolledPods", int32(1)))

		By("the daemon leaves the noisy namespace's results out to keep the report within its budget")
		rep := &appsv1alpha1.NodePodProbeReport{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node}, rep)).To(Succeed())
		rep.Status.OmittedNamespaces = []string{noisy}
		Expect(k8sClient.Status().Update(ctx, rep)).To(Succeed())
		Eventually(policyStatus(noisyPol), wait, poll).Should(HaveField("UnprobedContainers", int32(2)))
		Eventually(unprobedGauge(noisy), wait, poll).Should(BeEquivalentTo(2))
		Eventually(notProbedEvents(noisy, "a", "leaves out the results"), wait, poll).Should(ContainElement(
			ContainSubstring("leaves out the results of namespace " + noisy)))
		Consistently(policyStatus(quietPol), "2s", poll).Should(HaveField("UnprobedContainers", int32(0)))
		Expect(notProbedEvents(quiet, "b", "leaves out the results")()).To(BeEmpty())
	})

	It("counts the enrolled pods of a node no daemon runs on", func() {
		ns, node := newNamespace(), name("windows-node") // no daemon: no Lease, no report
		pol := createPolicy(ns, "all", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.Mode = policyv1alpha1.ModeDryRun })
		a := createPod(ns, "a", node, podOpts{containers: []string{"app", "side"}})
		By("the node has no NodePodProbe")
		Eventually(policyStatus(pol), wait, poll).Should(HaveField("UnprobedContainers", int32(1)),
			"a pod without a probe context still lost a probe")
		Eventually(unprobedGauge(ns), wait, poll).Should(BeEquivalentTo(1))
		Eventually(notProbedEvents(ns, "a", ""), wait, poll).Should(ContainElement(ContainSubstring("not in the NodePodProbe of node " + node)))

		By("the manager maps the pod and creates the node's report, which no daemon writes")
		report(node, []*corev1.Pod{a})
		Eventually(policyStatus(pol), wait, poll).Should(HaveField("UnprobedContainers", int32(2)))
		Eventually(unprobedGauge(ns), wait, poll).Should(BeEquivalentTo(2))
		Eventually(notProbedEvents(ns, "a", ""), wait, poll).Should(ContainElement(ContainSubstring("the daemon of node " + node + " is not renewing its Lease")))
	})
})
