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
package wiring

import (
	"maps"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	prom "github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/gate"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// execsIn lists the commands the test CRI server ran in container id.
func execsIn(cs *critest.Server, id string) [][]string {
	var out [][]string
	for _, c := range cs.Calls("ExecSync") {
		if "containerd://"+c.ContainerID == id {
			out = append(out, c.Cmd)
		}
	}
	return out
}

func rejectedNotes(name string) []string {
	var list eventsv1.EventList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == gate.ReasonRejected && e.Type == corev1.EventTypeWarning {
			out = append(out, e.Note)
		}
	}
	return out
}

var _ = Describe("node daemon trust boundary", func() {
	evil := corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "rm -rf /data"}}},
		TimeoutSeconds: 1, PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1}

	It("runs nothing its pod's sealed probe context does not say, and says so on the pod", func() {
		tg := startTargets()
		node := "node-trust"
		refusedBefore := prom.ToFloat64(gate.Refusals.WithLabelValues(gate.CauseNotSigned)) +
			prom.ToFloat64(gate.Refusals.WithLabelValues(gate.CauseBadSeal))

		By("a pod with no probe at all, which a cluster admin named in the NodePodProbe")
		plainID := "containerd://" + tg.cri.AddContainer("sb-plain", "app")
		plain := tg.createPod(node, "plain", plainID)
		tg.cri.SetOwner(cri.TrimContainerID(plainID), string(plain.UID), "app")
		By("a pod created with the enrolled label and a hand-written exec context, never admitted")
		forgedID := "containerd://" + tg.cri.AddContainer("sb-forged", "app")
		forged := tg.createPod(node, "forged", forgedID)
		tg.cri.SetOwner(cri.TrimContainerID(forgedID), string(forged.UID), "app")
		setProbeContext(forged, evil)
		forged.Labels = map[string]string{appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue}
		Expect(k8sClient.Update(ctx, forged)).To(Succeed())
		By("a sealed pod with an HTTP probe whose context was rewritten into an exec after the seal")
		swappedID := "containerd://" + tg.cri.AddContainer("sb-swapped", "app")
		swapped := tg.createPod(node, "swapped", swappedID)
		tg.cri.SetOwner(cri.TrimContainerID(swappedID), string(swapped.UID), "app")
		podProbe(swapped, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(tg.httpPort))}})
		setProbeContext(swapped, evil)
		Expect(k8sClient.Update(ctx, swapped)).To(Succeed())
		By("and a sealed pod with an exec probe, named as the mapping controller names it")
		goodID := "containerd://" + tg.cri.AddContainer("sb-good", "app")
		good := tg.createPod(node, "good", goodID)
		tg.cri.SetOwner(cri.TrimContainerID(goodID), string(good.UID), "app")
		goodEntry := podProbe(good, corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ok"}}})

		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{entryFor(plain), entryFor(forged), entryFor(swapped), goodEntry}
		createNPP(npp)
		eng := startDaemon(node, tg.rt)

		Eventually(func(g Gomega) {
			got := getResults(node)
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.npp.Generation))
			g.Expect(got.Status.ProbedPods).To(BeEquivalentTo(1))
			g.Expect(stateOf(got)).To(HaveKey("good"))
		}, "20s").Should(Succeed())
		Eventually(func() [][]string { return execsIn(tg.cri, goodID) }, "10s").ShouldNot(BeEmpty())
		Eventually(func(g Gomega) {
			g.Expect(rejectedNotes("plain")).To(ContainElement(ContainSubstring("the pod's probe context was not admitted by the operator's pod webhook")))
			g.Expect(rejectedNotes("forged")).To(ContainElement(ContainSubstring("the pod's probe context was not admitted by the operator's pod webhook")))
			g.Expect(rejectedNotes("swapped")).To(ContainElement(ContainSubstring("the liveness probes of this pod, which the node's NodePodProbe names, are not run")))
		}, "10s").Should(Succeed())
		Consistently(func(g Gomega) {
			for _, id := range []string{plainID, forgedID, swappedID} {
				g.Expect(execsIn(tg.cri, id)).To(BeEmpty(), "nothing ran in %s", id)
			}
			// Only the sealed pod has a result. The probes the others' contexts name are reported
			// NotProbed, with the gate's cause; the pod without a context names none: the pod
			// itself is listed not probed.
			listed := map[string]appsv1alpha1.ContainerProbeState{}
			for _, ps := range getReport(node).Status.PodProbeStatuses {
				if ps.Name == "plain" {
					g.Expect(ps.ProbeStates).To(BeEmpty())
					g.Expect(ps.NotProbed).To(HavePrefix(gate.CauseNotSigned + ": "))
					continue
				}
				g.Expect(ps.ProbeStates).To(HaveLen(1), ps.Name)
				listed[ps.Name] = ps.ProbeStates[0]
			}
			g.Expect(listed).To(HaveLen(2))
			for _, name := range []string{"forged", "swapped"} {
				g.Expect(listed[name].Name).To(Equal(name+"-app"), name)
				g.Expect(listed[name].State).To(Equal(appsv1alpha1.ProbeNotProbed), name)
				g.Expect(listed[name].ContainerID).To(BeEmpty(), name)
				g.Expect(listed[name].Message).To(MatchRegexp("^("+gate.CauseNotSigned+"|"+gate.CauseBadSeal+"): "), name)
			}
		}, "3s").Should(Succeed())
		Expect(eng.Probes.WorkerCount()).To(Equal(1))
		refused := prom.ToFloat64(gate.Refusals.WithLabelValues(gate.CauseNotSigned)) +
			prom.ToFloat64(gate.Refusals.WithLabelValues(gate.CauseBadSeal)) - refusedBefore
		Expect(refused).To(BeEquivalentTo(3))
		Expect(rejectedNotes("good")).To(BeEmpty())
	})

	It("lists a pod whose probes it cannot name as not probed, never leaves it out as passing", func() {
		tg := startTargets()
		node := "node-unnamed"
		By("a sealed pod the daemon probes")
		goodID := "containerd://" + tg.cri.AddContainer("sb-named-good", "app")
		good := createPod(node, "named-good", goodID)
		tg.cri.SetOwner(cri.TrimContainerID(goodID), string(good.UID), "app")
		goodEntry := podProbe(good, corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ok"}}})
		By("a pod whose probe context does not decode")
		garbled := createPod(node, "garbled", "containerd://garbled")
		garbled.Annotations = map[string]string{appsv1alpha1.AnnotationProbeContext: `[{"name":`}
		Expect(k8sClient.Update(ctx, garbled)).To(Succeed())
		By("an entry naming a pod the daemon does not have")
		ghost := appsv1alpha1.PodProbe{Name: "ghost", Namespace: ns, UID: "6f1c9a52-0000-4c0e-9d55-000000000000"}

		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{goodEntry, entryFor(garbled), ghost}
		createNPP(npp)
		startDaemon(node, tg.rt)

		Eventually(func(g Gomega) {
			got := getResults(node)
			g.Expect(got.Status.CompleteFor(got.npp.Generation)).To(BeTrue())
			states := stateOf(got)
			g.Expect(states["named-good"].State).To(Equal(appsv1alpha1.ProbeSucceeded))
			g.Expect(states["garbled"].State).To(Equal(appsv1alpha1.ProbeNotProbed))
			g.Expect(states["garbled"].Message).To(HavePrefix(gate.CauseNotSigned + ": "))
			g.Expect(states["ghost"].State).To(Equal(appsv1alpha1.ProbeNotProbed))
			g.Expect(states["ghost"].Message).To(HavePrefix(gate.CausePodNotFound + ": "))
		}, "20s").Should(Succeed())
		for _, ps := range getReport(node).Status.PodProbeStatuses {
			Expect(ps.ProbeStates).To(BeEmpty(), "%s: a pod not probed has no probe states", ps.Name)
			Expect(len(ps.NotProbed)).To(BeNumerically("<=", appsv1alpha1.MaxPodNotProbedLength))
		}
	})

	It("probes a pod whose status has no IP yet: an exec probe needs none", func() {
		tg := startTargets()
		node := "node-no-ip"
		id := "containerd://" + tg.cri.AddContainer("sb-no-ip", "app")
		pod := createPod(node, "no-ip", id)
		tg.cri.SetOwner(cri.TrimContainerID(id), string(pod.UID), "app")
		entry := podProbe(pod, corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"hang"}}})
		pod.Status.PodIP, pod.Status.PodIPs = "", nil
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{entry}
		createNPP(npp)
		startDaemon(node, tg.rt)

		Eventually(func(g Gomega) {
			got := getResults(node)
			g.Expect(got.Status.CompleteFor(got.npp.Generation)).To(BeTrue())
			g.Expect(stateOf(got)["no-ip"].State).To(Equal(appsv1alpha1.ProbeFailed))
		}, "20s").Should(Succeed())
		Expect(execsIn(tg.cri, id)).To(ContainElement([]string{"hang"}))
	})

	It("keeps probing across a key rotation, and probes a pod sealed with the new key once the key is published", func() {
		tg := startTargets()
		node := "node-rotation"
		oldPod := tg.createPod(node, "sealed-old", "containerd://sealed-old")
		oldEntry := podProbe(oldPod, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(tg.httpPort))}})
		newKey, err := signature.GenerateKeyPair()
		Expect(err).NotTo(HaveOccurred())
		newPod := tg.createPod(node, "sealed-new", "containerd://sealed-new")
		newProbe := corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(tg.httpPort))}},
			TimeoutSeconds: 1, PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1}
		setProbeContext(newPod, newProbe)
		seal, err := signature.Seal(newKey, newPod)
		Expect(err).NotTo(HaveOccurred())
		newPod.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = seal
		Expect(k8sClient.Update(ctx, newPod)).To(Succeed())
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{oldEntry, entryFor(newPod)}
		createNPP(npp)
		eng := startDaemon(node, tg.rt)

		Eventually(func() appsv1alpha1.ProbeState { return stateOf(getResults(node))["sealed-old"].State }, "20s").
			Should(Equal(appsv1alpha1.ProbeSucceeded))
		Consistently(func() appsv1alpha1.ProbeState { return stateOf(getResults(node))["sealed-new"].State }, "2s").
			Should(Equal(appsv1alpha1.ProbeNotProbed), "a key the daemon does not hold verifies nothing: not probed")

		By("the manager publishes the new key in the trust ConfigMap, next to the old one")
		cm := &corev1.ConfigMap{}
		key := types.NamespacedName{Namespace: appsv1alpha1.DefaultOperatorNamespace, Name: signature.TrustConfigMapName}
		Expect(k8sClient.Get(ctx, key, cm)).To(Succeed())
		original := maps.Clone(cm.Data)
		DeferCleanup(func() {
			Expect(k8sClient.Get(ctx, key, cm)).To(Succeed())
			cm.Data = original
			Expect(k8sClient.Update(ctx, cm)).To(Succeed())
		})
		set, _ := signature.DecodeKeySet(cm)
		cm.Data = signature.EncodeKeySet(set.With(newKey, time.Now()))
		Expect(k8sClient.Update(ctx, cm)).To(Succeed())
		Eventually(func() appsv1alpha1.ProbeState { return stateOf(getResults(node))["sealed-new"].State }, "20s").
			Should(Equal(appsv1alpha1.ProbeSucceeded))
		Expect(eng.Probes.WorkerCount()).To(Equal(2))
		Expect(stateOf(getResults(node))["sealed-old"].State).To(Equal(appsv1alpha1.ProbeSucceeded), "the old pod was probed throughout")
	})
	It("reports a probe NotProbed once its key is removed after it passed: never omitted as passing", func() {
		tg := startTargets()
		node := "node-retired"
		pod := tg.createPod(node, "sealed-retired", "containerd://sealed-retired")
		entry := podProbe(pod, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(tg.httpPort))}})
		createNPP(&appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node},
			Spec: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry}}})
		eng := startDaemon(node, tg.rt)
		Eventually(func(g Gomega) {
			got := getResults(node)
			g.Expect(got.Status.PodProbeStatuses).To(BeEmpty(), "a passing probe is left out of the report")
			g.Expect(stateOf(got)["sealed-retired"].State).To(Equal(appsv1alpha1.ProbeSucceeded))
		}, "20s").Should(Succeed())

		By("the key that sealed the pod is removed from the trust ConfigMap")
		cm := &corev1.ConfigMap{}
		key := types.NamespacedName{Namespace: appsv1alpha1.DefaultOperatorNamespace, Name: signature.TrustConfigMapName}
		Expect(k8sClient.Get(ctx, key, cm)).To(Succeed())
		original := maps.Clone(cm.Data)
		DeferCleanup(func() {
			Expect(k8sClient.Get(ctx, key, cm)).To(Succeed())
			cm.Data = original
			Expect(k8sClient.Update(ctx, cm)).To(Succeed())
		})
		cm.Data = signature.EncodeKeySet(signature.KeySet{})
		Expect(k8sClient.Update(ctx, cm)).To(Succeed())
		Eventually(func(g Gomega) {
			s := stateOf(getResults(node))["sealed-retired"]
			g.Expect(s.State).To(Equal(appsv1alpha1.ProbeNotProbed))
			g.Expect(s.Message).To(HavePrefix(gate.CauseUnknownKey + ": "))
		}, "20s").Should(Succeed())
		Expect(eng.Probes.WorkerCount()).To(BeZero())
		Expect(getResults(node).Status.ProbedPods).To(BeZero())
	})
})
