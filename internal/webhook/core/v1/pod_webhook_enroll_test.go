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

package v1

import (
	"context"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// warningRecorder keeps the admission warnings the apiserver returns.
type warningRecorder struct {
	mu   sync.Mutex
	list []string
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// warningClient is a client whose requests' admission warnings land in the returned recorder.
func warningClient() (client.Client, *warningRecorder) {
	GinkgoHelper()
	w := &warningRecorder{}
	c := rest.CopyConfig(cfg)
	c.WarningHandlerWithContext = w
	cl, err := client.New(c, client.Options{Scheme: testutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return cl, w
}

var _ = Describe("Pod webhook opt-in values", func() {
	const ns = "pods-optin"
	BeforeEach(func() { ensureNamespace(ns) })

	DescribeTable("denies an opt-in value other than true or false, naming the field and the allowed values",
		func(key, value string) {
			err := k8sClient.Create(ctx, appPod(ns, "bad-optin", map[string]string{key: value}))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(`admission webhook "mpod-v1.kb.io" denied the request: Pod "bad-optin" is invalid: ` +
				`metadata.annotations[` + key + `]: Unsupported value: "` + value + `": supported values: "true", "false"`))
		},
		Entry("yes", appsv1alpha1.AnnotationEnabled, "yes"),
		Entry("capitalised True", appsv1alpha1.AnnotationEnabled, "True"),
		Entry("empty", appsv1alpha1.AnnotationEnabled, ""),
		Entry("OpenKruise's alias: 1", appsv1alpha1.AnnotationKruiseEnabled, "1"),
	)

	It("accepts \"false\" and leaves the pod as it is", func() {
		pod := appPod(ns, "opt-out", map[string]string{appsv1alpha1.AnnotationEnabled: "false"})
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectUntouched(pod)
	})
})

var _ = Describe("Pod webhook signature", func() {
	const ns = "pods-signed"
	BeforeEach(func() { ensureNamespace(ns) })

	It("replaces a signature the creator wrote with its own", func() {
		copied := signature.SignAdmission(testutil.SigningKey, signature.Admission{Namespace: "elsewhere", Name: "resigned",
			AnnotationKey: appsv1alpha1.AnnotationProbeContext, Value: "[]", Issued: testNow()})
		pod := appPod(ns, "resigned", map[string]string{appsv1alpha1.AnnotationEnabled: "true",
			appsv1alpha1.AnnotationProbeContextSignature: copied})
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Expect(pod.Annotations[appsv1alpha1.AnnotationProbeContextSignature]).NotTo(Equal(copied))
		Expect(verifyAdmission(pod)).To(Succeed())
	})

	It("strips the enrolled label and a signature from a pod it does not enroll, and a seal from every pod", func() {
		signed := appPod(ns, "forged", nil)
		signed.Annotations[appsv1alpha1.AnnotationProbeContext] = `[{"name":"web","livenessProbe":{"exec":{"command":["id"]}}}]`
		testutil.Admit(signed)
		signed.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = "v1.0123456789abcdef.forged"
		signed.Labels[appsv1alpha1.LabelEnrolled] = "true"
		Expect(k8sClient.Create(ctx, signed)).To(Succeed())
		Expect(signed.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))
		Expect(signed.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContextSignature))
		Expect(signed.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContextSeal))

		enrolled := appPod(ns, "self-sealed", map[string]string{appsv1alpha1.AnnotationEnabled: "true",
			appsv1alpha1.AnnotationProbeContextSeal: "v1.0123456789abcdef.forged"})
		Expect(k8sClient.Create(ctx, enrolled)).To(Succeed())
		Expect(enrolled.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
		Expect(enrolled.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContextSeal), "only the manager seals, after creation")
	})

	It("signs a probe context bound to the pod's namespace and name, or generateName", func() {
		pod := appPod(ns, "bound", optIn())
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Expect(verifyAdmission(pod)).To(Succeed())
		moved := pod.DeepCopy()
		moved.Namespace = "pods-other"
		Expect(verifyAdmission(moved)).To(MatchError(ContainSubstring("does not match")))
		renamed := pod.DeepCopy()
		renamed.Name = "bound-copy"
		Expect(verifyAdmission(renamed)).To(MatchError(ContainSubstring("does not match")))

		generated := appPod(ns, "", optIn())
		generated.GenerateName = "gen-"
		Expect(k8sClient.Create(ctx, generated)).To(Succeed())
		Expect(generated.Name).To(HavePrefix("gen-"))
		Expect(verifyAdmission(generated)).To(Succeed(), "admitted before the apiserver named it")
		sibling := generated.DeepCopy()
		sibling.GenerateName, sibling.Name = "other-", "other-x2k4p"
		Expect(verifyAdmission(sibling)).To(MatchError(ContainSubstring("does not match")))
	})
})

// jobPod is a Job-style pod: restartPolicy set, one app container with a liveness probe, and a
// sidecar with one.
func jobPod(ns, name string, policy corev1.RestartPolicy) *corev1.Pod { //nolint:unparam // a pod builder takes its namespace, like NewPod
	tcp := func(port int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}}
	}
	return testutil.NewPod(ns, name).Annotations(optIn()).Sidecars("proxy").Containers("app").
		LivenessProbe("proxy", tcp(15000)).LivenessProbe("app", tcp(8080)).
		With(func(p *corev1.Pod) { p.Spec.RestartPolicy = policy }).Build()
}

var _ = Describe("Pod webhook enrollment of pods the kubelet does not restart after a stop", func() {
	const ns = "pods-jobs"
	BeforeEach(func() { ensureNamespace(ns) })

	DescribeTable("keeps the native probe of the regular container, enrolls the sidecar and warns why",
		func(policy corev1.RestartPolicy) {
			c, warnings := warningClient()
			pod := jobPod(ns, "job-"+strings.ToLower(string(policy)), policy)
			Expect(c.Create(ctx, pod)).To(Succeed())
			Expect(pod.Spec.Containers[0].LivenessProbe).NotTo(BeNil(), "the kubelet keeps the app's liveness probe")
			Expect(pod.Spec.InitContainers[0].LivenessProbe).To(BeNil(), "the sidecar is restarted after a stop: enrolled")
			entries := contextOf(pod)
			Expect(entries).To(HaveLen(1))
			Expect(entries[0].Name).To(Equal("proxy"))
			Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
			Expect(verifyAdmission(pod)).To(Succeed())
			Expect(warnings.take()).To(ContainElement(
				`container "app" keeps its native livenessProbe and is not enrolled in enhanced liveness: ` +
					`the pod's restartPolicy is ` + string(policy) + `, and the operator restarts a container by stopping it, ` +
					`which the kubelet follows with a new start only under restartPolicy Always (a container that exits 0 on SIGTERM would stay stopped)`))
		},
		Entry("OnFailure", corev1.RestartPolicyOnFailure),
		Entry("Never", corev1.RestartPolicyNever),
	)

	It("enrolls nothing of a Never pod without a sidecar, and says why", func() {
		c, warnings := warningClient()
		pod := jobPod(ns, "no-sidecar", corev1.RestartPolicyNever)
		pod.Spec.InitContainers = nil
		Expect(c.Create(ctx, pod)).To(Succeed())
		Expect(pod.Spec.Containers[0].LivenessProbe).NotTo(BeNil())
		Expect(pod.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))
		Expect(pod.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContext))
		Expect(pod.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContextSignature))
		Expect(warnings.take()).To(ContainElement(ContainSubstring(`container "app" keeps its native livenessProbe`)))
	})

	It("enrolls a container whose own restartPolicy is Always, and not one whose own policy is OnFailure", func() {
		always := jobPod(ns, "container-always", corev1.RestartPolicyNever)
		always.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		Expect(k8sClient.Create(ctx, always)).To(Succeed())
		Expect(always.Spec.Containers[0].LivenessProbe).To(BeNil())
		Expect(contextOf(always)).To(HaveLen(2))

		c, warnings := warningClient()
		onFailure := jobPod(ns, "container-onfailure", corev1.RestartPolicyAlways)
		onFailure.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
		Expect(c.Create(ctx, onFailure)).To(Succeed())
		Expect(onFailure.Spec.Containers[0].LivenessProbe).NotTo(BeNil())
		Expect(warnings.take()).To(ContainElement(ContainSubstring(`container "app" keeps its native livenessProbe and is not enrolled in enhanced liveness: its restartPolicy is OnFailure`)))
	})

	It("denies a written probe context naming a regular container of an OnFailure pod", func() {
		pod := jobPod(ns, "written", corev1.RestartPolicyOnFailure)
		pod.Spec.Containers[0].LivenessProbe = nil
		pod.Annotations[appsv1alpha1.AnnotationProbeContext] = `[{"name":"app","livenessProbe":{"tcpSocket":{"port":8080}}}]`
		err := k8sClient.Create(ctx, pod)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(`container "app": metadata.annotations[` + appsv1alpha1.AnnotationProbeContext +
			`][0].name: Invalid value: "app": cannot be probed by the operator: the pod's restartPolicy is OnFailure`))
		Expect(err.Error()).To(ContainSubstring("keep its livenessProbe in the container spec"))
	})
})
