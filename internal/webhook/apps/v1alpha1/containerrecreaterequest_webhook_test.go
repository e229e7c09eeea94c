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

package v1alpha1

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

const crrNS = "crr-webhook"

const probeContext = `[{"name":"web","livenessProbe":{"httpGet":{"path":"/","port":8080},"terminationGracePeriodSeconds":7}},` +
	`{"name":"proxy","livenessProbe":{"tcpSocket":{"port":15000}}}]`

// runningPod creates a pod bound to node-1 whose containers web, worker and the sidecar proxy run;
// plain init container migrate has finished.
func runningPod(name string, mutate func(*corev1.Pod)) *corev1.Pod {
	GinkgoHelper()
	b := testutil.NewPod(crrNS, name).OnNode("node-1").
		Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: probeContext}).
		InitContainers("migrate").Sidecars("proxy").Containers("web", "worker").
		With(func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](45) }).
		Running("").ContainerID("migrate", "containerd://m1").
		ContainerID("proxy", "containerd://p1").RestartCount("proxy", 1).
		ContainerID("web", "containerd://w1").RestartCount("web", 2).
		ContainerID("worker", "containerd://k1")
	if mutate != nil {
		b.With(mutate)
	}
	return b.Create(ctx, k8sClient)
}

func crrFor(pod string, containers ...string) *appsv1alpha1.ContainerRecreateRequest {
	crr := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: crrNS, GenerateName: pod + "-"},
		Spec:       appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod},
	}
	for _, c := range containers {
		crr.Spec.Containers = append(crr.Spec.Containers, appsv1alpha1.ContainerRecreateRequestContainer{Name: c})
	}
	return crr
}

func expectDenied(crr *appsv1alpha1.ContainerRecreateRequest, want string) {
	GinkgoHelper()
	err := k8sClient.Create(ctx, crr)
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	Expect(err.Error()).To(ContainSubstring(want))
}

var _ = Describe("ContainerRecreateRequest webhook", Ordered, func() {
	var pod *corev1.Pod

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: crrNS}})).To(Succeed())
		pod = runningPod("app", nil)
	})

	It("fills the labels (pod and node only: whether it is active is its phase), statusContext, failure policy, grace period and TTL from the pod", func() {
		crr := crrFor("app", "web")
		Expect(k8sClient.Create(ctx, crr)).To(Succeed())
		Expect(crr.Labels).To(Equal(map[string]string{
			appsv1alpha1.LabelCRRPodUID:   string(pod.UID),
			appsv1alpha1.LabelCRRNodeName: "node-1",
		}))
		Expect(crr.Spec.Containers[0].StatusContext).To(Equal(&appsv1alpha1.ContainerRecreateRequestContainerContext{
			ContainerID: "containerd://w1", RestartCount: 2}))
		Expect(crr.Spec.Strategy.FailurePolicy).To(Equal(appsv1alpha1.FailurePolicyFail))
		Expect(*crr.Spec.Strategy.TerminationGracePeriodSeconds).To(BeEquivalentTo(7), "the probe's grace period wins")
		Expect(*crr.Spec.TTLSecondsAfterFinished).To(BeEquivalentTo(300))
		Expect(crr.Spec.ActiveDeadlineSeconds).To(HaveValue(BeEquivalentTo(600)), "every default is written into the spec")
		Expect(crr.Status.Phase).To(BeEmpty())
	})

	It("uses the pod's grace period for a container whose probe sets none, and the longest of several", func() {
		crr := crrFor("app", "proxy")
		Expect(k8sClient.Create(ctx, crr)).To(Succeed())
		Expect(*crr.Spec.Strategy.TerminationGracePeriodSeconds).To(BeEquivalentTo(45))
		Expect(crr.Spec.Containers[0].StatusContext.ContainerID).To(Equal("containerd://p1"), "sidecars can be restarted")

		both := crrFor("app", "web", "worker")
		Expect(k8sClient.Create(ctx, both)).To(Succeed())
		Expect(*both.Spec.Strategy.TerminationGracePeriodSeconds).To(BeEquivalentTo(45))
		Expect(both.Spec.Containers[1].StatusContext.ContainerID).To(Equal("containerd://k1"))
	})

	It("defaults the deadline to cover a long grace period", func() {
		runningPod("patient", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](900) })
		crr := crrFor("patient", "worker") // worker's probe sets no grace period: the pod's 900 s
		crr.Spec.Strategy.MinStartedSeconds = 20
		Expect(k8sClient.Create(ctx, crr)).To(Succeed())
		Expect(crr.Spec.Strategy.TerminationGracePeriodSeconds).To(HaveValue(BeEquivalentTo(900)))
		Expect(crr.Spec.ActiveDeadlineSeconds).To(HaveValue(BeEquivalentTo(900 + 20 + appsv1alpha1.RestartMarginSeconds)))
	})

	It("keeps what the creator set: grace period, failure policy, TTL, statusContext and correct labels", func() {
		crr := crrFor("app", "web")
		crr.Labels = map[string]string{
			appsv1alpha1.LabelCRRPodUID: string(pod.UID), appsv1alpha1.LabelCRRNodeName: "node-1",
			appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByDecisionController,
		}
		crr.Spec.Containers[0].StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://w0", RestartCount: 1}
		crr.Spec.Strategy = appsv1alpha1.ContainerRecreateRequestStrategy{
			FailurePolicy: appsv1alpha1.FailurePolicyIgnore, TerminationGracePeriodSeconds: ptr.To[int64](3)}
		crr.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
		crr.Spec.ActiveDeadlineSeconds = ptr.To[int64](3)
		Expect(k8sClient.Create(ctx, crr)).To(Succeed())
		Expect(crr.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelManagedBy, appsv1alpha1.ManagedByDecisionController))
		Expect(crr.Spec.Containers[0].StatusContext.ContainerID).To(Equal("containerd://w0"))
		Expect(crr.Spec.Strategy.FailurePolicy).To(Equal(appsv1alpha1.FailurePolicyIgnore))
		Expect(*crr.Spec.Strategy.TerminationGracePeriodSeconds).To(BeEquivalentTo(3))
		Expect(*crr.Spec.TTLSecondsAfterFinished).To(BeEquivalentTo(60))
	})

	It("denies a missing pod", func() {
		expectDenied(crrFor("nope", "web"), `spec.podName: Not found: "nope"`)
	})

	It("denies an unscheduled pod", func() {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: crrNS, Name: "pending"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "x"}}}}
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		expectDenied(crrFor("pending", "web"), `spec.podName: Invalid value: "pending": the pod is not scheduled to a node yet`)
	})

	It("denies a terminating pod", func() {
		runningPod("terminating", func(p *corev1.Pod) { p.Finalizers = []string{"example.test/hold"} })
		term := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: crrNS, Name: "terminating"}}
		Expect(k8sClient.Delete(ctx, term)).To(Succeed())
		expectDenied(crrFor("terminating", "web"), `spec.podName: Invalid value: "terminating": the pod is terminating`)
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(term), term)).To(Succeed())
		term.Finalizers = nil
		Expect(k8sClient.Update(ctx, term)).To(Succeed())
	})

	It("denies a pod with restartPolicy Never", func() {
		runningPod("never", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.InitContainers = p.Spec.InitContainers[:1]
		})
		expectDenied(crrFor("never", "web"), "the pod has restartPolicy Never")
	})

	It("judges each container by the restart policy the kubelet applies to it after a stop", func() {
		runningPod("never-sidecar", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever })
		Expect(k8sClient.Create(ctx, crrFor("never-sidecar", "proxy"))).To(Succeed(),
			"a sidecar (restartPolicy Always) of a Never pod is started again after a stop")
		expectDenied(crrFor("never-sidecar", "web"), `spec.containers[0].name: Invalid value: "web": the pod has restartPolicy Never`)

		runningPod("onfailure", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure })
		expectDenied(crrFor("onfailure", "web"), `spec.containers[0].name: Invalid value: "web": the pod has restartPolicy OnFailure: `+
			`a stopped container would not be started again`)
		Expect(k8sClient.Create(ctx, crrFor("onfailure", "proxy"))).To(Succeed())

		runningPod("own-policy", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			p.Spec.Containers[1].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
		})
		Expect(k8sClient.Create(ctx, crrFor("own-policy", "web"))).To(Succeed(), "a container's own Always in a Never pod")
		expectDenied(crrFor("own-policy", "worker"), `spec.containers[0].name: Invalid value: "worker": the container has restartPolicy OnFailure`)
	})

	It("denies unknown, duplicate and non-restartable init containers", func() {
		expectDenied(crrFor("app", "nginx"), `spec.containers[0].name: Not found: "nginx"`)
		expectDenied(crrFor("app", "web", "web"), `spec.containers[1].name: Duplicate value: "web"`)
		expectDenied(crrFor("app", "migrate"), `spec.containers[0].name: Invalid value: "migrate": is an init container that is not restartable`)
	})

	It("denies a container without a running containerID", func() {
		stopped := runningPod("stopped", nil)
		stopped.Status.ContainerStatuses[1] = corev1.ContainerStatus{Name: "worker",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
		Expect(k8sClient.Status().Update(ctx, stopped)).To(Succeed())
		expectDenied(crrFor("stopped", "worker"), `spec.containers[0].name: Invalid value: "worker": the container has no running containerID`)
	})

	It("denies activeDeadlineSeconds below 3", func() {
		crr := crrFor("app", "web")
		crr.Spec.ActiveDeadlineSeconds = ptr.To[int64](2)
		expectDenied(crr, "spec.activeDeadlineSeconds: Invalid value: 2: must be greater than or equal to 3")
	})

	It("denies identity labels that contradict the pod", func() {
		crr := crrFor("app", "web")
		crr.Labels = map[string]string{appsv1alpha1.LabelCRRPodUID: "0b0b0b0b-0000-0000-0000-000000000000"}
		expectDenied(crr, `metadata.labels[crr.enhancedliveness.io/pod-uid]: Invalid value: "0b0b0b0b-0000-0000-0000-000000000000": must be the UID of pod "app"`)
		crr = crrFor("app", "web")
		crr.Labels = map[string]string{appsv1alpha1.LabelCRRNodeName: "node-2"}
		expectDenied(crr, `metadata.labels[crr.enhancedliveness.io/node-name]: Invalid value: "node-2": must be the node of pod "app" (node-1)`)
	})

	It("keeps the spec and the identity labels immutable, and lets other labels change", func() {
		crr := crrFor("app", "web")
		Expect(k8sClient.Create(ctx, crr)).To(Succeed())

		changed := crr.DeepCopy()
		changed.Spec.TTLSecondsAfterFinished = ptr.To[int32](1)
		err := k8sClient.Update(ctx, changed)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec is immutable after creation"))

		for _, key := range []string{appsv1alpha1.LabelCRRPodUID, appsv1alpha1.LabelCRRNodeName} {
			relabelled := crr.DeepCopy()
			relabelled.Labels[key] = "other"
			err := k8sClient.Update(ctx, relabelled)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring("metadata.labels[" + key + "]: Forbidden: is immutable"))
			unlabelled := crr.DeepCopy()
			delete(unlabelled.Labels, key)
			Expect(k8sClient.Update(ctx, unlabelled)).NotTo(Succeed())
		}

		labelled := crr.DeepCopy()
		labelled.Labels["team"] = "shop"
		Expect(k8sClient.Update(ctx, labelled)).To(Succeed(), "other labels may be added")
	})

	It("creates a request with one webhook round trip and validates its updates", func() {
		const mutating, validating = "mcontainerrecreaterequest-v1alpha1.kb.io", "vcontainerrecreaterequest-v1alpha1.kb.io"
		mCreate, vCreate, vUpdate := webhookCalls(mutating, "CREATE"), webhookCalls(validating, "CREATE"), webhookCalls(validating, "UPDATE")
		crr := crrFor("app", "web")
		Expect(k8sClient.Create(ctx, crr)).To(Succeed())
		Expect(crr.Labels).To(HaveKey(appsv1alpha1.LabelCRRNodeName), "the mutating webhook ran")
		labelled := crr.DeepCopy()
		labelled.Labels["team"] = "shop"
		Expect(k8sClient.Update(ctx, labelled)).To(Succeed())

		Expect(webhookCalls(mutating, "CREATE")).To(Equal(mCreate + 1))
		Expect(webhookCalls(validating, "CREATE")).To(Equal(vCreate), "a create is not sent to the validating webhook")
		Expect(webhookCalls(validating, "UPDATE")).To(Equal(vUpdate + 1))
	})
})
