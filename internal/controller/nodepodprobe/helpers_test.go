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
	"context"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// nppWriteCounter counts the write requests the reconciler sends for each NodePodProbe.
type nppWriteCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *nppWriteCounter) count(obj client.Object) {
	if _, ok := obj.(*appsv1alpha1.NodePodProbe); !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[obj.GetName()]++
}

func (c *nppWriteCounter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

type countingClient struct {
	client.Client
	c *nppWriteCounter
}

func (w countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	w.c.count(obj)
	return w.Client.Create(ctx, obj, opts...)
}

func (w countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	w.c.count(obj)
	return w.Client.Update(ctx, obj, opts...)
}

func (w countingClient) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
	w.c.count(obj)
	return w.Client.Patch(ctx, obj, p, opts...)
}

func (w countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	w.c.count(obj)
	return w.Client.Delete(ctx, obj, opts...)
}

func (w countingClient) Status() client.SubResourceWriter {
	return countingStatus{w.Client.Status(), w.c}
}

type countingStatus struct {
	client.SubResourceWriter
	c *nppWriteCounter
}

func (w countingStatus) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	w.c.count(obj)
	return w.SubResourceWriter.Patch(ctx, obj, p, opts...)
}

func (w countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	w.c.count(obj)
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

func createNode(name string) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

// probeContext is what the Pod webhook writes for mappedPod's containers.
func probeContext() string {
	GinkgoHelper()
	s, err := probecontext.Encode([]probecontext.ContainerProbe{
		{Name: "proxy", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(15000)}}}},
		{Name: "web", LivenessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
			PeriodSeconds: 5, TerminationGracePeriodSeconds: ptr.To[int64](9)}},
	})
	Expect(err).NotTo(HaveOccurred())
	return s
}

// mappedPod is an enrolled pod (as the webhook leaves it) bound to node, with a sidecar.
func mappedPod(name, node string) *corev1.Pod {
	return testutil.NewPod(mapNS, name).Enrolled().OnNode(node).Sidecars("proxy").Containers("web").Port("web", "http", 8080).
		Annotations(map[string]string{appsv1alpha1.AnnotationEnabled: "true", appsv1alpha1.AnnotationProbeContext: probeContext()}).
		Build()
}

// createRunning creates pod and, when ip is set, reports it Running with that IP. The pod is
// signed as the pod webhook signs what it admits, then sealed as the seal controller does.
func createRunning(pod *corev1.Pod, ip string) *corev1.Pod {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, testutil.Admit(pod))).To(Succeed())
	seal(pod)
	if ip != "" {
		setPodStatus(pod, corev1.PodRunning, ip)
	}
	return pod
}

// seal writes the seal the seal controller writes on an existing pod.
func seal(pod *corev1.Pod) {
	GinkgoHelper()
	if probecontext.AnnotationKey(pod.Annotations) == "" {
		return
	}
	s := testutil.Seal(pod.DeepCopy()).Annotations[appsv1alpha1.AnnotationProbeContextSeal]
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, appsv1alpha1.AnnotationProbeContextSeal, s)
	Expect(k8sClient.Patch(ctx, pod, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

func setPodStatus(pod *corev1.Pod, phase corev1.PodPhase, ip string) {
	GinkgoHelper()
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	pod.Status.Phase = phase
	pod.Status.PodIP = ip
	pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
}

func getNPP(g Gomega, node string) *appsv1alpha1.NodePodProbe {
	npp := &appsv1alpha1.NodePodProbe{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: node}, npp)).To(Succeed())
	return npp
}

// printed returns the row the API server prints for a cluster-scoped object of this group
// (what `kubectl get` shows): each column's name and its cell, "" for an empty one.
func printed(g Gomega, resource, name string) map[string]string {
	row, err := testutil.PrintedRow(ctx, cfg, "/apis/"+appsv1alpha1.GroupVersion.String()+"/"+resource+"/"+name)
	g.Expect(err).NotTo(HaveOccurred())
	return row
}

// entries summarises a NodePodProbe as "namespace/name/uid" per pod.
func entries(npp *appsv1alpha1.NodePodProbe) []string {
	var out []string
	for _, p := range npp.Spec.PodProbes {
		out = append(out, fmt.Sprintf("%s/%s/%s", p.Namespace, p.Name, p.UID))
	}
	return out
}

func entry(pod *corev1.Pod) string {
	return fmt.Sprintf("%s/%s/%s", pod.Namespace, pod.Name, pod.UID)
}

func expectNoNPP(node string) {
	GinkgoHelper()
	Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Name: node}, &appsv1alpha1.NodePodProbe{}))
	}, mapTimeout).Should(BeTrue())
}

// expectEmptyNPP waits until the node's NodePodProbe lists no pods; it is kept while the node exists.
func expectEmptyNPP(node string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(getNPP(g, node).Spec.PodProbes).To(BeEmpty())
	}, mapTimeout).Should(Succeed())
	Consistently(func(g Gomega) { getNPP(g, node) }, "1s").Should(Succeed(), "not deleted while its node exists")
}

// eventNotes lists the notes of the events with reason about the object called name.
func eventNotes(list *eventsv1.EventList, name, reason string) []string {
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}
