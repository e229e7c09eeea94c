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
	"fmt"

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// A waiting pod is restarted once a node's report catches up with its spec: the pods the report
// leaves out turn from not probed yet to passing. (It is decided again by its own requeue: the
// decision memory does not track waiting pods, so the report's watch cannot wake it sooner.)
var _ = Describe("Decision controller, a node's report catching up with its spec", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	It("decides again a pod that waits while its siblings on another node were not probed yet, once that node's report covers them", func() {
		labels := map[string]string{"app": "web"}
		ns, nodeA, nodeB := dt.NewNamespace(), dt.NewNode(), dt.NewNode()
		dt.CreatePolicy(ns, "web", nil)
		rs := dt.Deployment(ns, "web", 10, labels)
		failing := dt.CreatePod(ns, "web-0", nodeA, dt.PodOpts{Owner: rs, Labels: labels})
		var siblings []*corev1.Pod
		for i := 1; i < 10; i++ {
			siblings = append(siblings, dt.CreatePod(ns, fmt.Sprintf("web-%d", i), nodeB, dt.PodOpts{Owner: rs, Labels: labels}))
		}
		// Node B's spec grew from one pod to nine (generation 2); its daemon has reported only
		// the first spec: the eight new siblings are not probed yet.
		dt.ReportProbes(nodeB, siblings[:1])
		dt.ReportProbes(nodeB, siblings)
		setProbedGeneration(nodeB, 1)

		dt.ReportProbes(nodeA, []*corev1.Pod{failing}, dt.Failed(failing, "app", 1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero(), "waits: none of its siblings has been probed")

		// The decision waits (no sibling has passed yet, nine not probed) and looks again later
		// (RequeueAfter, 10 s here): then the siblings pass.
		setProbedGeneration(nodeB, 2) // the daemon's next write: all nine pass
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("web-0"))
	})
})

// setProbedGeneration sets the probedGeneration of the node's report, as its daemon's write for
// that NodePodProbe generation would.
func setProbedGeneration(node string, g int64) {
	GinkgoHelper()
	rep := &appsv1alpha1.NodePodProbeReport{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node}, rep)).To(Succeed())
	npp := &appsv1alpha1.NodePodProbe{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node}, npp)).To(Succeed())
	Expect(npp.Generation).To(BeNumerically(">=", g))
	rep.Status.ProbedGeneration = g
	Expect(k8sClient.Status().Update(ctx, rep)).To(Succeed())
}
