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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// wideMappedPod is an enrolled pod (signed and sealed as if the webhook had admitted it: it got
// past the webhook) with n containers, each with a probe in the probe context.
func wideMappedPod(ns, name, node string, n int) *corev1.Pod {
	GinkgoHelper()
	names := make([]string, n)
	entries := make([]probecontext.ContainerProbe, n)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
		entries[i] = probecontext.ContainerProbe{Name: names[i], LivenessProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9)}}}}
	}
	value, err := probecontext.Encode(entries)
	Expect(err).NotTo(HaveOccurred())
	return testutil.NewPod(ns, name).Enrolled().OnNode(node).Containers(names...).
		Annotations(map[string]string{appsv1alpha1.AnnotationEnabled: "true", appsv1alpha1.AnnotationProbeContext: value}).
		Build()
}

func podEvents(g Gomega, ns, name, reason string) []string {
	list := &eventsv1.EventList{}
	g.Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	return eventNotes(list, name, reason)
}

var _ = Describe("NodePodProbe mapping is never blocked by one entry", Ordered, func() {
	const (
		wideNS   = "npp-wide"
		node     = "npp-node-wide"
		vapNode  = "npp-node-refused"
		vapName  = "npp-refuse-marked-pods"
		refusedP = "vap-refused"
	)
	var stop func()

	BeforeAll(func() {
		suite.CreateNamespace(wideNS)
		suite.CreateNamespace(mapNS)
		var err error
		stop, err = testutil.StartManager(ctx, cfg, ctrl.Options{
			Cache: managercache.Options(managercache.Config{OperatorNamespace: "el-operator", Strip: true}),
		}, func(mgr ctrl.Manager) error {
			if err := managercache.AddIndexes(ctx, mgr); err != nil {
				return err
			}
			return (&Reconciler{
				Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
				Recorder: mgr.GetEventRecorder("nodepodprobe-controller"),
				Keys:     testutil.StaticKeys{}, OperatorNamespace: "el-operator",
			}).SetupWithManager(mgr)
		})
		Expect(err).NotTo(HaveOccurred())
	})
	AfterAll(func() { stop() })

	It("maps a pod of another namespace beside a pod with 65 probes that bypassed the webhook, and reports the wide pod", func() {
		createNode(node)
		createRunning(wideMappedPod(wideNS, "wide", node, appsv1alpha1.MaxProbesPerPod+1), "10.1.0.1")
		normal := createRunning(mappedPod("neighbour", node), "10.1.0.2") // namespace mapNS
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, node))).To(Equal([]string{entry(normal)}))
			g.Expect(podEvents(g, wideNS, "wide", ReasonNotMapped)).To(ContainElement(ContainSubstring(
				"the pod has 65 liveness probes; a NodePodProbeReport lists at most 64 per pod")))
		}, mapTimeout).Should(Succeed())
		Expect(meta.FindStatusCondition(getNPP(Default, node).Status.Conditions, appsv1alpha1.ConditionMapped)).To(BeNil(),
			"no write was refused: no condition, no status write")
	})

	It("names 30 pods with ~60 KB exec probes of one namespace and another namespace's pod in one NodePodProbe", func() {
		// Their probes in the spec (before 2026-12-05) made 1.8 MB, more than etcd takes: the write was
		// refused and the other namespace's pod went unprobed with them.
		const heavyNS, heavyNode = "npp-heavy", "npp-node-heavy"
		suite.CreateNamespace(heavyNS)
		createNode(heavyNode)
		command := []string{"/bin/sh", "-c", "true #" + strings.Repeat("x", 60_000)}
		var want []string
		for i := range 30 {
			value, err := probecontext.Encode([]probecontext.ContainerProbe{{Name: "app", LivenessProbe: &corev1.Probe{
				ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: command}}}}})
			Expect(err).NotTo(HaveOccurred())
			pod := testutil.NewPod(heavyNS, fmt.Sprintf("heavy-%02d", i)).Enrolled().OnNode(heavyNode).Containers("app").
				Annotations(map[string]string{appsv1alpha1.AnnotationEnabled: "true", appsv1alpha1.AnnotationProbeContext: value}).Build()
			want = append(want, entry(createRunning(pod, fmt.Sprintf("10.3.0.%d", i+1))))
		}
		beside := createRunning(mappedPod("beside-heavy", heavyNode), "10.3.1.1") // namespace mapNS
		want = append(want, entry(beside))
		Eventually(func(g Gomega) {
			npp := getNPP(g, heavyNode)
			g.Expect(entries(npp)).To(ConsistOf(want))
			g.Expect(meta.FindStatusCondition(npp.Status.Conditions, appsv1alpha1.ConditionMapped)).To(BeNil(),
				"no write was refused, no pod left out: no Mapped condition")
		}, mapTimeout).Should(Succeed())
		Expect(podEvents(Default, mapNS, "beside-heavy", ReasonNotMapped)).To(BeEmpty())
	})

	It("sets Mapped=False and reports each pod left unprobed when the API server refuses the write, and clears it after", func() {
		// An admission policy stands for any refusal the operator cannot foresee. It matches this
		// spec's NodePodProbe only: the apiserver unloads a deleted policy a moment later, and the
		// suite's other specs run in any order.
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: vapName},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					ResourceNames: []string{vapNode},
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{appsv1alpha1.GroupVersion.Group},
							APIVersions: []string{"v1alpha1"}, Resources: []string{"nodepodprobes"}},
					}}}},
				Validations: []admissionregistrationv1.Validation{{
					Expression: `!has(object.spec) || !has(object.spec.podProbes) || object.spec.podProbes.all(p, !p.name.startsWith('` + refusedP + `'))`,
					Message:    "test policy refuses marked pods",
				}},
			},
		}
		Expect(k8sClient.Create(ctx, policy)).To(Succeed())
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: vapName},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: vapName,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
		}
		Expect(k8sClient.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func() {
			Expect(k8sClient.Delete(ctx, binding)).To(Succeed())
			Expect(k8sClient.Delete(ctx, policy)).To(Succeed())
		})

		createNode(vapNode)
		first := createRunning(mappedPod("first", vapNode), "10.2.0.1")
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, vapNode))).To(Equal([]string{entry(first)}))
		}, mapTimeout).Should(Succeed())

		refused := createRunning(mappedPod(refusedP, vapNode), "10.2.0.2")
		Eventually(func(g Gomega) {
			npp := getNPP(g, vapNode)
			g.Expect(entries(npp)).To(Equal([]string{entry(first)}), "the last spec written stays")
			c := meta.FindStatusCondition(npp.Status.Conditions, appsv1alpha1.ConditionMapped)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(appsv1alpha1.ReasonWriteRefused))
			g.Expect(c.Message).To(ContainSubstring("test policy refuses marked pods"))
			g.Expect(printed(g, "nodepodprobes", vapNode)).To(HaveKeyWithValue("Mapped", "False"), "kubectl get npp shows it")
			g.Expect(podEvents(g, mapNS, refusedP, ReasonNotMapped)).To(ContainElement(ContainSubstring(
				"the API server refused the NodePodProbe of node " + vapNode + " (condition Mapped=False on it)")))
			g.Expect(podEvents(g, mapNS, "first", ReasonNotMapped)).To(BeEmpty(), "a pod still probed is not reported")
			list := &eventsv1.EventList{}
			g.Expect(k8sClient.List(ctx, list)).To(Succeed())
			g.Expect(strings.Join(eventNotes(list, vapNode, ReasonWriteRefused), "\n")).To(
				ContainSubstring("the pods it would add are not probed"))
		}, mapTimeout).Should(Succeed())

		Expect(k8sClient.Delete(ctx, refused, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(getNPP(g, vapNode).Status.Conditions, appsv1alpha1.ConditionMapped)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(appsv1alpha1.ReasonSpecWritten))
		}, mapTimeout).Should(Succeed())
	})
})
