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

package unprobed_test

import (
	"strings"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/unprobed"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// notProbed: the daemon does not run the pod's probe of container (its trust gate refused it).
func notProbed(pod *corev1.Pod, container string) dt.ProbeState {
	return dt.ProbeState{Pod: pod, Container: container, State: appsv1alpha1.ProbeNotProbed}
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
	return func() float64 { return promtestutil.ToFloat64(unprobed.UnprobedContainers.WithLabelValues(ns)) }
}

// notProbedEvents returns the pod's LivenessNotProbed events that contain saying. The filter
// matters: on a loaded machine a pod's report can land after the suite's 1 s grace, and the
// pod then also gets an event for that (no report, not mapped) before the cause under test.
func notProbedEvents(ns, podName, saying string) func() []string {
	return func() []string {
		var out []string
		for _, e := range dt.Events(ns, podName) {
			if strings.HasPrefix(e, unprobed.EventLivenessNotProbed+": ") && strings.Contains(e, saying) {
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
		c := dt.TestConfig()
		c.Testing.UnprobedGrace = time.Second
		stop = dt.StartManager(c)
	})
	AfterAll(func() { stop() })

	It("counts a probe the daemon stopped running after it passed: policy status, metric, event, no restart", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pol := dt.CreatePolicy(ns, "all", nil)
		a := dt.CreatePod(ns, "a", node, dt.PodOpts{})
		b := dt.CreatePod(ns, "b", node, dt.PodOpts{})
		pods := []*corev1.Pod{a, b}
		dt.ReportProbes(node, pods)
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(HaveField("EnrolledPods", int32(2)))
		Eventually(unprobedGauge(ns), dt.Wait, dt.Poll).Should(BeZero())
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(HaveField("UnprobedContainers", int32(0)))

		By("the daemon's trust gate refuses a's probe after it passed (its key was retired)")
		dt.ReportProbes(node, pods, notProbed(a, "app"))
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(And(HaveField("UnprobedContainers", int32(1)),
			HaveField("FailingContainers", int32(0))))
		Eventually(unprobedGauge(ns), dt.Wait, dt.Poll).Should(BeEquivalentTo(1))
		refused := "does not run probe"
		Eventually(notProbedEvents(ns, "a", refused), dt.Wait, dt.Poll).Should(ConsistOf(
			HavePrefix(unprobed.EventLivenessNotProbed + ": 1 container(s) have no liveness probe running")))
		Expect(notProbedEvents(ns, "b", refused)()).To(BeEmpty())
		Expect(dt.CRRs(ns)).To(BeEmpty(), "not probed is no failure")

		By("the daemon probes it again")
		dt.ReportProbes(node, pods)
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(HaveField("UnprobedContainers", int32(0)))
		Eventually(unprobedGauge(ns), dt.Wait, dt.Poll).Should(BeZero())
	})

	It("counts every container of a pod whose probes the daemon cannot name", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pol := dt.CreatePolicy(ns, "all", nil)
		a := dt.CreatePod(ns, "a", node, dt.PodOpts{Containers: []string{"app", "side"}})
		b := dt.CreatePod(ns, "b", node, dt.PodOpts{})
		pods := []*corev1.Pod{a, b}
		dt.ReportProbes(node, pods)
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(HaveField("EnrolledPods", int32(2)))
		Eventually(unprobedGauge(ns), dt.Wait, dt.Poll).Should(BeZero())

		By("the daemon has no pod with a's UID: the report lists a itself not probed")
		listPodNotProbed(node, a, "pod-not-found: no pod with UID "+string(a.UID)+" on this node (yet)")
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(And(HaveField("UnprobedContainers", int32(2)),
			HaveField("FailingContainers", int32(0))))
		Eventually(unprobedGauge(ns), dt.Wait, dt.Poll).Should(BeEquivalentTo(2))
		Eventually(notProbedEvents(ns, "a", "pod-not-found"), dt.Wait, dt.Poll).Should(ContainElement(
			ContainSubstring("probes none of the pod's probes: pod-not-found: no pod with UID")))
		Expect(notProbedEvents(ns, "b", "pod-not-found")()).To(BeEmpty())
		Expect(dt.CRRs(ns)).To(BeEmpty(), "not probed is no failure")
	})

	It("counts the pods of a namespace the node's report leaves out, and only those", func() {
		noisy, quiet, node := dt.NewNamespace(), dt.NewNamespace(), dt.NewNode()
		noisyPol, quietPol := dt.CreatePolicy(noisy, "all", nil), dt.CreatePolicy(quiet, "all", nil)
		a := dt.CreatePod(noisy, "a", node, dt.PodOpts{Containers: []string{"app", "side"}})
		b := dt.CreatePod(quiet, "b", node, dt.PodOpts{})
		dt.ReportProbes(node, []*corev1.Pod{a, b})
		Eventually(dt.PolicyStatus(noisyPol), dt.Wait, dt.Poll).Should(HaveField("EnrolledPods", int32(1)))
		Eventually(dt.PolicyStatus(quietPol), dt.Wait, dt.Poll).Should(HaveField("EnrolledPods", int32(1)))

		By("the daemon leaves the noisy namespace's results out to keep the report within its budget")
		rep := &appsv1alpha1.NodePodProbeReport{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node}, rep)).To(Succeed())
		rep.Status.OmittedNamespaces = []string{noisy}
		Expect(k8sClient.Status().Update(ctx, rep)).To(Succeed())
		Eventually(dt.PolicyStatus(noisyPol), dt.Wait, dt.Poll).Should(HaveField("UnprobedContainers", int32(2)))
		Eventually(unprobedGauge(noisy), dt.Wait, dt.Poll).Should(BeEquivalentTo(2))
		Eventually(notProbedEvents(noisy, "a", "leaves out the results"), dt.Wait, dt.Poll).Should(ContainElement(
			ContainSubstring("leaves out the results of namespace " + noisy)))
		Consistently(dt.PolicyStatus(quietPol), "2s", dt.Poll).Should(HaveField("UnprobedContainers", int32(0)))
		Expect(notProbedEvents(quiet, "b", "leaves out the results")()).To(BeEmpty())
	})

	It("counts the enrolled pods of a node no daemon runs on", func() {
		ns, node := dt.NewNamespace(), dt.Name("windows-node") // no daemon: no Lease, no report
		pol := dt.CreatePolicy(ns, "all", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.Mode = policyv1alpha1.ModeDryRun })
		a := dt.CreatePod(ns, "a", node, dt.PodOpts{Containers: []string{"app", "side"}})
		By("the node has no NodePodProbe")
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(HaveField("UnprobedContainers", int32(1)),
			"a pod without a probe context still lost a probe")
		Eventually(unprobedGauge(ns), dt.Wait, dt.Poll).Should(BeEquivalentTo(1))
		Eventually(notProbedEvents(ns, "a", ""), dt.Wait, dt.Poll).Should(ContainElement(ContainSubstring("not in the NodePodProbe of node " + node)))

		By("the manager maps the pod and creates the node's report, which no daemon writes")
		dt.ReportProbes(node, []*corev1.Pod{a})
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(HaveField("UnprobedContainers", int32(2)))
		Eventually(unprobedGauge(ns), dt.Wait, dt.Poll).Should(BeEquivalentTo(2))
		Eventually(notProbedEvents(ns, "a", ""), dt.Wait, dt.Poll).Should(ContainElement(ContainSubstring("the daemon of node " + node + " is not renewing its Lease")))
	})
})
