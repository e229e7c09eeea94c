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

package nodepodprobe

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

var _ = Describe("NodePodProbe report", Ordered, func() {
	const node = "npp-report-node"
	var stop func()

	BeforeAll(func() {
		suite.CreateNamespace(mapNS)
		var err error
		stop, err = testutil.StartManager(ctx, cfg, ctrl.Options{
			Cache: managercache.Options(managercache.Config{OperatorNamespace: "el-operator", Strip: true}),
		}, func(mgr ctrl.Manager) error {
			if err := managercache.AddIndexes(ctx, mgr); err != nil {
				return err
			}
			return (&Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("nodepodprobe-controller"),
				Keys: testutil.StaticKeys{}, OperatorNamespace: "el-operator"}).SetupWithManager(mgr)
		})
		Expect(err).NotTo(HaveOccurred())
	})
	AfterAll(func() { stop() })

	getReport := func(g Gomega) *appsv1alpha1.NodePodProbeReport {
		rep := &appsv1alpha1.NodePodProbeReport{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: node}, rep)).To(Succeed())
		return rep
	}

	It("creates the report with the NodePodProbe, owned by it, with an empty status", func() {
		createNode(node)
		createRunning(mappedPod("report-1", node), "10.0.9.1")
		var npp *appsv1alpha1.NodePodProbe
		Eventually(func(g Gomega) {
			npp = getNPP(g, node)
			g.Expect(npp.Spec.PodProbes).To(HaveLen(1))
			getReport(g)
		}, mapTimeout).Should(Succeed())
		rep := getReport(Default)
		Expect(rep.OwnerReferences).To(HaveLen(1))
		owner := rep.OwnerReferences[0]
		Expect(owner.Kind).To(Equal("NodePodProbe"))
		Expect(owner.APIVersion).To(Equal(appsv1alpha1.GroupVersion.String()))
		Expect(owner.Name).To(Equal(node))
		Expect(owner.UID).To(Equal(npp.UID), "the garbage collector deletes it with this NodePodProbe")
		Expect(owner.Controller).To(HaveValue(BeTrue()))
		Expect(rep.Written()).To(BeFalse(), "only the daemon writes results")
		Expect(rep.Status).To(Equal(appsv1alpha1.ProbeResults{}))
	})

	It("prints what is there: kubectl get npp the spec's generation, kubectl get nppr the results", func() {
		npp := getNPP(Default, node)
		Expect(printed(Default, "nodepodprobes", node)).To(And(
			HaveKeyWithValue("Generation", fmt.Sprint(npp.Generation)),
			HaveKeyWithValue("Mapped", ""), // never refused: no condition
		))
		Expect(printed(Default, "nodepodprobereports", node)).To(And(
			HaveKeyWithValue("Probed", ""), HaveKeyWithValue("Failing", ""),
		), "nothing before a daemon writes")

		// What a daemon writes: one pod probed, its probe Failed.
		pp := npp.Spec.PodProbes[0]
		rep := getReport(Default)
		rep.Status = appsv1alpha1.ProbeResults{
			ObservedGeneration: npp.Generation, ProbedGeneration: npp.Generation, ProbedPods: 1, FailingProbes: 1,
			PodProbeStatuses: []appsv1alpha1.PodProbeStatus{{Name: pp.Name, Namespace: pp.Namespace, UID: pp.UID,
				ProbeStates: []appsv1alpha1.ContainerProbeState{{
					Name: probecontext.ProbeName(pp.Name, "web"), ContainerID: "containerd://a", State: appsv1alpha1.ProbeFailed,
				}}}},
		}
		Expect(k8sClient.Status().Update(ctx, rep)).To(Succeed())
		Expect(printed(Default, "nodepodprobereports", node)).To(And(
			HaveKeyWithValue("Probed", fmt.Sprint(npp.Generation)),
			HaveKeyWithValue("Pods", "1"),
			HaveKeyWithValue("Failing", "1"),
		))
	})

	It("creates the report again when it is deleted", func() {
		old := getReport(Default)
		Expect(k8sClient.Delete(ctx, old)).To(Succeed())
		Eventually(func(g Gomega) {
			rep := getReport(g)
			g.Expect(rep.UID).NotTo(Equal(old.UID))
			g.Expect(rep.OwnerReferences).To(HaveLen(1))
		}, mapTimeout).Should(Succeed())
	})
})
