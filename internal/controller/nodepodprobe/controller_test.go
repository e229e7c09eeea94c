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
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

const (
	mapNS      = "npp-mapping"
	mapTimeout = 10 * time.Second
)

var _ = Describe("NodePodProbe mapping", Ordered, func() {
	var (
		stop    func()
		rec     *Reconciler
		writes  = &nppWriteCounter{n: map[string]int{}}
		podA1   *corev1.Pod
		podA2   *corev1.Pod
		podB1   *corev1.Pod
		podC1   *corev1.Pod
		nodeA   = "npp-node-a"
		nodeB   = "npp-node-b"
		nodeC   = "npp-node-c"
		nodeDup = "npp-node-burst"
	)

	BeforeAll(func() {
		suite.CreateNamespace(mapNS)
		var err error
		stop, err = testutil.StartManager(ctx, cfg, ctrl.Options{
			Cache: managercache.Options(managercache.Config{OperatorNamespace: "el-operator", Strip: true}),
		}, func(mgr ctrl.Manager) error {
			rec = &Reconciler{
				Client:   countingClient{mgr.GetClient(), writes},
				Recorder: mgr.GetEventRecorder("nodepodprobe-controller"),
				Keys:     testutil.StaticKeys{}, OperatorNamespace: "el-operator",
			}
			if err := managercache.AddIndexes(ctx, mgr); err != nil {
				return err
			}
			return rec.SetupWithManager(mgr)
		})
		Expect(err).NotTo(HaveOccurred())
	})
	AfterAll(func() { stop() })

	It("maps enrolled pods on 3 nodes into 3 NodePodProbes", func() {
		for _, n := range []string{nodeA, nodeB, nodeC} {
			createNode(n)
		}
		podA1 = createRunning(mappedPod("a1", nodeA), "10.0.0.1")
		podA2 = createRunning(mappedPod("a2", nodeA), "10.0.0.2")
		podB1 = createRunning(mappedPod("b1", nodeB), "10.0.1.1")
		kruise := mappedPod("c1", nodeC)
		kruise.Annotations = map[string]string{
			appsv1alpha1.AnnotationKruiseEnabled: "true", appsv1alpha1.AnnotationKruiseProbeContext: probeContext()}
		podC1 = createRunning(kruise, "10.0.2.1")

		notEnrolled := mappedPod("not-enrolled", nodeA)
		notEnrolled.Labels = nil
		createRunning(notEnrolled, "10.0.0.9")
		createRunning(mappedPod("no-ip", nodeA), "")

		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeA))).To(Equal([]string{entry(podA1), entry(podA2)}))
			g.Expect(entries(getNPP(g, nodeB))).To(Equal([]string{entry(podB1)}))
			g.Expect(entries(getNPP(g, nodeC))).To(Equal([]string{entry(podC1)}))
		}, mapTimeout).Should(Succeed())

		npp := getNPP(Default, nodeA)
		Expect(npp.OwnerReferences).To(HaveLen(1))
		Expect(npp.OwnerReferences[0].Kind).To(Equal("Node"))
		Expect(npp.OwnerReferences[0].Name).To(Equal(nodeA))
		Expect(npp.Spec.PodProbes[0]).To(Equal(appsv1alpha1.PodProbe{Name: "a1", Namespace: mapNS, UID: podA1.UID}),
			"an entry names the pod only: the daemon reads its probes from the pod")
	})

	It("adds a pod once it has an IP", func() {
		late := createRunning(mappedPod("late", nodeB), "")
		Consistently(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeB))).To(Equal([]string{entry(podB1)}))
		}, "1s").Should(Succeed())
		setPodStatus(late, corev1.PodRunning, "10.0.1.2")
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeB))).To(Equal([]string{entry(podB1), entry(late)}))
		}, mapTimeout).Should(Succeed())
	})

	It("replaces a hand-edited spec, a duplicate pod entry included, with the desired one", func() {
		// The lists are atomic, so the API server does not reject a duplicate key: the spec's one
		// writer puts back what the pods say.
		npp := getNPP(Default, nodeB)
		want := entries(npp)
		edited := npp.DeepCopy()
		edited.Spec.PodProbes = append(edited.Spec.PodProbes, *npp.Spec.PodProbes[0].DeepCopy())
		edited.Spec.PodProbes[0].Name = "someone-else"
		Expect(k8sClient.Patch(ctx, edited, client.MergeFrom(npp))).To(Succeed())
		Expect(entries(getNPP(Default, nodeB))).NotTo(Equal(want), "the edit went through")
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeB))).To(Equal(want))
		}, mapTimeout).Should(Succeed())

		By("a reconcile that finds the spec it wants writes nothing")
		time.Sleep(2 * DefaultMappingBatchDelay)
		before := writes.get(nodeB)
		npp = getNPP(Default, nodeB)
		touched := npp.DeepCopy()
		touched.Annotations = map[string]string{"example.com/touched": "1"}
		Expect(k8sClient.Patch(ctx, touched, client.MergeFrom(npp))).To(Succeed())
		Consistently(func() int { return writes.get(nodeB) }, "2s").Should(Equal(before))
	})

	It("leaves the report's status to the daemon, stale entries included", func() {
		rep := &appsv1alpha1.NodePodProbeReport{}
		Eventually(func() error { return k8sClient.Get(ctx, types.NamespacedName{Name: nodeA}, rep) }, mapTimeout).Should(Succeed())
		now := metav1.Now()
		state := func(name string, st appsv1alpha1.ProbeState) []appsv1alpha1.ContainerProbeState {
			return []appsv1alpha1.ContainerProbeState{{Name: name, State: st, ContainerID: "containerd://1", LastProbeTime: now, LastTransitionTime: now}}
		}
		rep.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{
			{Name: "a1", Namespace: mapNS, UID: podA1.UID, ProbeStates: state("a1-web", appsv1alpha1.ProbeFailed)},
			{Name: "gone", Namespace: mapNS, UID: "0e4b3c4e-0000-0000-0000-000000000000", ProbeStates: state("gone-web", appsv1alpha1.ProbeFailed)},
		}
		rep.Status.ProbedGeneration, rep.Status.ProbedPods, rep.Status.FailingProbes = getNPP(Default, nodeA).Generation, 2, 2
		Expect(k8sClient.Status().Update(ctx, rep)).To(Succeed())
		written := rep.Status
		// A pod event makes the controller reconcile the node; it must not touch the report.
		setPodStatus(podA2, corev1.PodRunning, "10.0.0.2")
		Consistently(func(g Gomega) {
			got := &appsv1alpha1.NodePodProbeReport{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: nodeA}, got)).To(Succeed())
			g.Expect(got.Status).To(Equal(written))
		}, "2s").Should(Succeed())
	})

	It("says on the pod why a probe of it is not mapped, and names the pod for its other probes", func() {
		broken := mappedPod("broken-port", nodeA)
		s, err := probecontext.Encode([]probecontext.ContainerProbe{
			{Name: "web", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("admin")}}}},
			{Name: "proxy", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(15000)}}}},
		})
		Expect(err).NotTo(HaveOccurred())
		broken.Annotations[appsv1alpha1.AnnotationProbeContext] = s
		createRunning(broken, "10.0.0.8")
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeA))).To(ContainElement(entry(broken)))
			list := &eventsv1.EventList{}
			g.Expect(k8sClient.List(ctx, list, client.InNamespace(mapNS))).To(Succeed())
			g.Expect(eventNotes(list, "broken-port", "LivenessProbeNotMapped")).NotTo(BeEmpty())
		}, mapTimeout).Should(Succeed())
		Expect(k8sClient.Delete(ctx, broken, client.GracePeriodSeconds(0))).To(Succeed())
	})

	It("maps no pod whose probe context is not sealed for it (the seal controller reports why)", func() {
		unsigned := mappedPod("unsigned", nodeA)
		Expect(k8sClient.Create(ctx, unsigned)).To(Succeed()) // created around the webhook: no signature
		setPodStatus(unsigned, corev1.PodRunning, "10.0.0.20")
		admitted := mappedPod("admitted", nodeA)
		Expect(k8sClient.Create(ctx, testutil.Admit(admitted))).To(Succeed()) // admitted, not sealed yet
		setPodStatus(admitted, corev1.PodRunning, "10.0.0.22")
		copied := mappedPod("copied", nodeA)
		Expect(k8sClient.Create(ctx, testutil.Admit(copied))).To(Succeed())
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, appsv1alpha1.AnnotationProbeContextSeal,
			podA2.Annotations[appsv1alpha1.AnnotationProbeContextSeal]) // another pod's seal
		Expect(k8sClient.Patch(ctx, copied, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		setPodStatus(copied, corev1.PodRunning, "10.0.0.23")
		rewritten := createRunning(mappedPod("rewritten", nodeA), "10.0.0.21")
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeA))).To(ContainElement(entry(rewritten)))
		}, mapTimeout).Should(Succeed())

		By("rewriting the sealed probe context (no admission policy in this suite stops it)")
		evil := `[{"name":"web","livenessProbe":{"exec":{"command":["/bin/sh","-c","id"]}}}]`
		patch = fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, appsv1alpha1.AnnotationProbeContext, evil)
		Expect(k8sClient.Patch(ctx, rewritten, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeA))).NotTo(ContainElement(entry(rewritten)))
		}, mapTimeout).Should(Succeed())
		Consistently(func(g Gomega) {
			got := entries(getNPP(g, nodeA))
			for _, e := range []string{entry(unsigned), entry(admitted), entry(copied)} {
				g.Expect(got).NotTo(ContainElement(e))
			}
		}, "2s").Should(Succeed())

		By("sealed, the admitted pod is mapped")
		seal(admitted)
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeA))).To(ContainElement(entry(admitted)))
		}, mapTimeout).Should(Succeed())
		for _, p := range []*corev1.Pod{unsigned, admitted, copied, rewritten} {
			Expect(k8sClient.Delete(ctx, p, client.GracePeriodSeconds(0))).To(Succeed())
		}
	})

	It("removes deleted and replaced pods", func() {
		Expect(k8sClient.Delete(ctx, podA1, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func(g Gomega) {
			npp := getNPP(g, nodeA)
			g.Expect(entries(npp)).To(Equal([]string{entry(podA2)}))
		}, mapTimeout).Should(Succeed())

		oldUID := podA2.UID
		Expect(k8sClient.Delete(ctx, podA2, client.GracePeriodSeconds(0))).To(Succeed())
		replacement := createRunning(mappedPod("a2", nodeA), "10.0.0.3")
		Expect(replacement.UID).NotTo(Equal(oldUID))
		Eventually(func(g Gomega) {
			npp := getNPP(g, nodeA)
			g.Expect(entries(npp)).To(Equal([]string{entry(replacement)}))
		}, mapTimeout).Should(Succeed())
	})

	It("removes a finished pod and keeps the emptied NodePodProbe while the node exists", func() {
		setPodStatus(podC1, corev1.PodSucceeded, "10.0.2.1")
		expectEmptyNPP(nodeC)
	})

	It("removes a terminating pod", func() {
		term := mappedPod("terminating", nodeC)
		term.Finalizers = []string{"example.test/hold"}
		createRunning(term, "10.0.2.7")
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeC))).To(Equal([]string{entry(term)}))
		}, mapTimeout).Should(Succeed())
		Expect(k8sClient.Delete(ctx, term)).To(Succeed())
		expectEmptyNPP(nodeC)
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(term), term)).To(Succeed(), "still terminating")
		term.Finalizers = nil
		Expect(k8sClient.Update(ctx, term)).To(Succeed())
	})

	It("deletes the NodePodProbe of a deleted node and does not recreate it", func() {
		Expect(k8sClient.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeB}})).To(Succeed())
		expectNoNPP(nodeB)
		// b1 and late are still bound to the deleted node; another event for them changes nothing.
		setPodStatus(podB1, corev1.PodRunning, "10.0.1.9")
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Name: nodeB}, &appsv1alpha1.NodePodProbe{}))
		}, "2s").Should(BeTrue())
	})

	It("converges 200 pods created at once on one node with few NodePodProbe writes", func() {
		createNode(nodeDup)
		const n = 200
		pods := make([]*corev1.Pod, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for i := w; i < n; i += 8 {
					pod := testutil.Admit(mappedPod(fmt.Sprintf("burst-%03d", i), nodeDup))
					if err := k8sClient.Create(ctx, pod); err != nil {
						errs <- err
					}
					pods[i] = pod
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
		// The kubelet starts them over a few seconds: one IP every 10 ms, each its own event.
		start := time.Now()
		for i, pod := range pods {
			testutil.Seal(pod) // written with the status, as the pods/status subresource allows
			pod.Status.Phase = corev1.PodRunning
			pod.Status.PodIP = fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
			Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
			time.Sleep(10 * time.Millisecond)
		}
		spread := time.Since(start)
		var want []string
		for _, p := range pods {
			want = append(want, entry(p))
		}
		Eventually(func(g Gomega) {
			g.Expect(entries(getNPP(g, nodeDup))).To(Equal(want))
		}, "30s").Should(Succeed())
		// Let any reconcile still queued finish before counting.
		time.Sleep(2 * DefaultMappingBatchDelay)
		count := writes.get(nodeDup)
		AddReportEntry("NodePodProbe writes for 200 pods", count)
		windows := int(spread/DefaultMappingBatchDelay) + 1
		GinkgoWriter.Printf("NodePodProbe writes for %d pods on one node: %d (IPs arrived over %s = %d batch windows)\n",
			n, count, spread.Round(time.Millisecond), windows)
		// About one write per batch window while the IPs arrive, never one per pod. The slack
		// covers windows that start while a reconcile is still running; without batching this
		// run makes about 25 writes.
		Expect(count).To(BeNumerically("<=", windows*3/2+2))
	})
})
