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
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

func ensureNamespace(name string) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	err := k8sClient.Create(ctx, ns)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

// appPod is a Deployment-style pod: two containers with liveness probes (named HTTP port, exec),
// readiness and startup probes that must stay, a plain init container and a sidecar with a
// liveness probe of its own.
func appPod(ns, name string, annotations map[string]string) *corev1.Pod {
	return testutil.NewPod(ns, name).Annotations(annotations).
		Labels(map[string]string{"app": "shop", "pod-template-hash": "5d9c7b"}).
		InitContainers("migrate").Sidecars("proxy").Containers("web", "worker").Port("web", "http", 8080).
		LivenessProbe("proxy", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(15000)}}}).
		LivenessProbe("web", &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
			PeriodSeconds: 5, FailureThreshold: 4, TerminationGracePeriodSeconds: ptr.To[int64](12),
		}).
		LivenessProbe("worker", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/check"}}}}).
		With(func(p *corev1.Pod) {
			web := &p.Spec.Containers[0]
			web.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}}
			web.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}}
		}).Build()
}

func optIn() map[string]string {
	return map[string]string{appsv1alpha1.AnnotationEnabled: "true"}
}

func contextOf(pod *corev1.Pod) []probecontext.ContainerProbe {
	GinkgoHelper()
	var entries []probecontext.ContainerProbe
	Expect(json.Unmarshal([]byte(pod.Annotations[appsv1alpha1.AnnotationProbeContext]), &entries)).To(Succeed())
	return entries
}

func expectEnrolled(pod *corev1.Pod) {
	GinkgoHelper()
	Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
	Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelMode, "Enforce"), "no policy says Shadow: the operator restarts it")
	Expect(verifyAdmission(pod)).To(Succeed(), "the webhook signs what it wrote")
	Expect(pod.Annotations).To(HaveKey(appsv1alpha1.AnnotationProbeContextSignature))
	entries := contextOf(pod)
	Expect(entries).To(HaveLen(3))
	Expect([]string{entries[0].Name, entries[1].Name, entries[2].Name}).To(Equal([]string{"proxy", "web", "worker"}))
	Expect(entries[0].LivenessProbe.TCPSocket.Port).To(Equal(intstr.FromInt32(15000)))
	web := entries[1].LivenessProbe
	Expect(web.HTTPGet.Port).To(Equal(intstr.FromString("http")), "named ports are resolved by the mapping controller, not here")
	Expect(web.HTTPGet.Path).To(Equal("/healthz"))
	Expect(web.PeriodSeconds).To(BeEquivalentTo(5))
	Expect(web.FailureThreshold).To(BeEquivalentTo(4))
	Expect(web.TimeoutSeconds).To(BeEquivalentTo(1))
	Expect(*web.TerminationGracePeriodSeconds).To(BeEquivalentTo(12))
	Expect(entries[2].LivenessProbe.Exec.Command).To(Equal([]string{"/bin/check"}))

	Expect(pod.Spec.InitContainers[1].LivenessProbe).To(BeNil())
	Expect(pod.Spec.Containers[0].LivenessProbe).To(BeNil())
	Expect(pod.Spec.Containers[1].LivenessProbe).To(BeNil())
	Expect(pod.Spec.Containers[0].ReadinessProbe).NotTo(BeNil(), "readiness stays with the kubelet")
	Expect(pod.Spec.Containers[0].StartupProbe).NotTo(BeNil(), "startup stays with the kubelet")
}

func expectUntouched(pod *corev1.Pod) {
	GinkgoHelper()
	Expect(pod.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))
	Expect(pod.Labels).NotTo(HaveKey(appsv1alpha1.LabelMode))
	Expect(pod.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContext))
	Expect(pod.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContextSignature))
	Expect(pod.Spec.Containers[0].LivenessProbe).NotTo(BeNil())
	Expect(pod.Spec.Containers[1].LivenessProbe).NotTo(BeNil())
	Expect(pod.Spec.InitContainers[1].LivenessProbe).NotTo(BeNil())
}

var _ = Describe("Pod webhook", func() {
	const ns = "pods-enroll"
	BeforeEach(func() { ensureNamespace(ns) })

	It("enrolls an opted-in Deployment-style pod with two containers and a sidecar", func() {
		pod := appPod(ns, "", optIn())
		pod.GenerateName = "shop-5d9c7b-"
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectEnrolled(pod)
	})

	It("accepts the OpenKruise opt-in alias", func() {
		pod := appPod(ns, "kruise-alias", map[string]string{appsv1alpha1.AnnotationKruiseEnabled: "true"})
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectEnrolled(pod)
	})

	It("leaves a pod that did not opt in untouched", func() {
		pod := appPod(ns, "plain", nil)
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectUntouched(pod)
	})

	It("does not enroll on an opt-in value other than \"true\"", func() {
		pod := appPod(ns, "opt-false", map[string]string{appsv1alpha1.AnnotationEnabled: "false"})
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectUntouched(pod)
	})

	It("labels nothing when an opted-in pod has no liveness probe", func() {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-liveness", Annotations: optIn()},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Expect(pod.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))
		Expect(pod.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContext))
	})

	It("fails open: while the manager is down, pods are created with their native probe", func() {
		suite.StopServingWebhooks()
		pod := appPod(ns, "manager-down", optIn())
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectUntouched(pod)
		suite.ServeWebhooks()
		pod = appPod(ns, "manager-back", optIn())
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectEnrolled(pod)
	})

	It("skips kube-system and the operator's namespace", func() {
		ensureNamespace(operatorNamespace)
		for _, skipped := range []string{metav1.NamespaceSystem, operatorNamespace} {
			pod := appPod(skipped, "skipped", optIn())
			Expect(k8sClient.Create(ctx, pod)).To(Succeed())
			expectUntouched(pod)
		}
	})
})

var _ = Describe("Pod webhook with EnhancedLivenessPolicy enroll", Ordered, func() {
	const ns = "pods-policy"
	BeforeAll(func() {
		ensureNamespace(ns)
		Expect(k8sClient.Create(ctx, &policyv1alpha1.EnhancedLivenessPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "enroll-shop"},
			Spec: policyv1alpha1.EnhancedLivenessPolicySpec{
				Enroll:   true,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}},
			},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &policyv1alpha1.EnhancedLivenessPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-enroll-all"},
			Spec:       policyv1alpha1.EnhancedLivenessPolicySpec{Enroll: false},
		})).To(Succeed())
	})

	It("enrolls a pod the policy selects, once the cache has the policy", func() {
		Eventually(func(g Gomega) {
			pod := appPod(ns, "", nil)
			pod.GenerateName = "shop-"
			g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
			g.Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
		}).Should(Succeed())
		pod := appPod(ns, "selected", nil)
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectEnrolled(pod)
	})

	It("does not enroll a pod only a policy without enroll selects", func() {
		pod := appPod(ns, "other", nil)
		pod.Labels = map[string]string{"app": "other"}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectUntouched(pod)
	})

	It("does not enroll pods of another namespace", func() {
		ensureNamespace("pods-policy-other")
		pod := appPod("pods-policy-other", "shop", nil)
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectUntouched(pod)
	})
})

// apiserverCauses creates the pod without enrollment, so that the apiserver validates the probe
// in the spec itself, and returns its field errors as "<field>: <message>".
func apiserverCauses(pod *corev1.Pod) []string {
	GinkgoHelper()
	err := k8sClient.Create(ctx, pod)
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "the apiserver must reject this probe: %v", err)
	var out []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	Expect(out).NotTo(BeEmpty())
	return out
}

var _ = Describe("Pod webhook probe validation", func() {
	const ns = "pods-invalid"
	BeforeEach(func() { ensureNamespace(ns) })

	type mutation func(pod *corev1.Pod)
	web := func(p *corev1.Pod) *corev1.Probe { return p.Spec.Containers[0].LivenessProbe }
	sidecar := func(p *corev1.Pod) *corev1.Probe { return p.Spec.InitContainers[1].LivenessProbe }

	DescribeTable("denies with the apiserver's wording, naming the container",
		func(container string, mutate mutation) {
			plain := appPod(ns, "invalid", nil)
			mutate(plain)
			want := apiserverCauses(plain)

			enrolled := appPod(ns, "invalid", optIn())
			mutate(enrolled)
			err := k8sClient.Create(ctx, enrolled)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(`admission webhook "mpod-v1.kb.io" denied the request`))
			Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("container %q", container)))
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}
		},
		Entry("no handler", "web", func(p *corev1.Pod) { web(p).ProbeHandler = corev1.ProbeHandler{} }),
		Entry("two handlers", "web", func(p *corev1.Pod) {
			web(p).TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(1)}
		}),
		Entry("exec without command", "worker", func(p *corev1.Pod) { p.Spec.Containers[1].LivenessProbe.Exec.Command = nil }),
		Entry("negative initialDelaySeconds", "web", func(p *corev1.Pod) { web(p).InitialDelaySeconds = -1 }),
		Entry("negative timeoutSeconds", "web", func(p *corev1.Pod) { web(p).TimeoutSeconds = -1 }),
		Entry("negative periodSeconds", "web", func(p *corev1.Pod) { web(p).PeriodSeconds = -5 }),
		Entry("negative failureThreshold", "web", func(p *corev1.Pod) { web(p).FailureThreshold = -3 }),
		Entry("negative successThreshold", "web", func(p *corev1.Pod) { web(p).SuccessThreshold = -1 }),
		Entry("successThreshold other than 1", "web", func(p *corev1.Pod) { web(p).SuccessThreshold = 2 }),
		Entry("probe terminationGracePeriodSeconds 0", "web", func(p *corev1.Pod) { web(p).TerminationGracePeriodSeconds = ptr.To[int64](0) }),
		Entry("probe terminationGracePeriodSeconds negative", "web", func(p *corev1.Pod) { web(p).TerminationGracePeriodSeconds = ptr.To[int64](-2) }),
		Entry("port 0", "web", func(p *corev1.Pod) { web(p).HTTPGet.Port = intstr.FromInt32(0) }),
		Entry("port above 65535", "proxy", func(p *corev1.Pod) { sidecar(p).TCPSocket.Port = intstr.FromInt32(65536) }),
		Entry("port name too long", "web", func(p *corev1.Pod) { web(p).HTTPGet.Port = intstr.FromString("abcdefghijklmnop") }),
		Entry("port name without a letter", "proxy", func(p *corev1.Pod) { sidecar(p).TCPSocket.Port = intstr.FromString("123") }),
		Entry("port name with double hyphen", "web", func(p *corev1.Pod) { web(p).HTTPGet.Port = intstr.FromString("a--b") }),
		Entry("port name with upper case", "web", func(p *corev1.Pod) { web(p).HTTPGet.Port = intstr.FromString("Http") }),
		Entry("gRPC port 0", "web", func(p *corev1.Pod) {
			web(p).ProbeHandler = corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 0}}
		}),
		Entry("unsupported scheme", "web", func(p *corev1.Pod) { web(p).HTTPGet.Scheme = "FTP" }),
		Entry("bad header name", "web", func(p *corev1.Pod) {
			web(p).HTTPGet.HTTPHeaders = []corev1.HTTPHeader{{Name: "X_Bad", Value: "v"}}
		}),
	)

	It("denies a named port the container does not declare", func() {
		pod := appPod(ns, "named-port", optIn())
		pod.Spec.Containers[0].LivenessProbe.HTTPGet.Port = intstr.FromString("metrics")
		err := k8sClient.Create(ctx, pod)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(`container "web": spec.containers[0].livenessProbe.httpGet.port: Invalid value: "metrics": must be the name of a port of container "web"`))
	})

	It("accepts headers with empty values and repeated names", func() {
		pod := appPod(ns, "headers", optIn())
		pod.Spec.Containers[0].LivenessProbe.HTTPGet.HTTPHeaders = []corev1.HTTPHeader{
			{Name: "Accept", Value: ""}, {Name: "X-A", Value: "1"}, {Name: "X-A", Value: "2"}}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Expect(contextOf(pod)[1].LivenessProbe.HTTPGet.HTTPHeaders).To(HaveLen(3))
	})
})

func annotated(ns, name, key, value string) *corev1.Pod { //nolint:unparam // a pod builder takes its namespace, like NewPod
	pod := appPod(ns, name, optIn())
	pod.Annotations[key] = value
	// The creator moved the probes itself.
	pod.Spec.Containers[0].LivenessProbe = nil
	pod.Spec.Containers[1].LivenessProbe = nil
	pod.Spec.InitContainers[1].LivenessProbe = nil
	return pod
}

var _ = Describe("Pod webhook with a probe context written by the creator", func() {
	const ns = "pods-annotated"
	BeforeEach(func() { ensureNamespace(ns) })
	const valid = `[{"name":"web","livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":3}}]`

	It("accepts a valid annotation as is and labels the pod", func() {
		pod := annotated(ns, "valid", appsv1alpha1.AnnotationProbeContext, valid)
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Expect(pod.Annotations[appsv1alpha1.AnnotationProbeContext]).To(Equal(valid))
		Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
		Expect(verifyAdmission(pod)).To(Succeed())
	})

	It("accepts OpenKruise's annotation as is", func() {
		pod := annotated(ns, "kruise-context", appsv1alpha1.AnnotationKruiseProbeContext, valid)
		pod.Annotations = map[string]string{
			appsv1alpha1.AnnotationKruiseEnabled: "true", appsv1alpha1.AnnotationKruiseProbeContext: valid}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Expect(pod.Annotations[appsv1alpha1.AnnotationKruiseProbeContext]).To(Equal(valid))
		Expect(pod.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContext))
		Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
		Expect(verifyAdmission(pod)).To(Succeed(), "OpenKruise's key is signed as it stands")
	})

	It("merges the probes still in the spec into the written annotation", func() {
		pod := annotated(ns, "merge", appsv1alpha1.AnnotationProbeContext, valid)
		pod.Spec.Containers[1].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ok"}}}}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		entries := contextOf(pod)
		Expect(entries).To(HaveLen(2))
		Expect(entries[0].Name).To(Equal("web"))
		Expect(entries[1].Name).To(Equal("worker"))
		Expect(pod.Spec.Containers[1].LivenessProbe).To(BeNil())
	})

	key := appsv1alpha1.AnnotationProbeContext
	DescribeTable("denies an invalid annotation",
		func(value string, withSpecProbe bool, want string) {
			pod := annotated(ns, "bad-annotation", key, value)
			if withSpecProbe {
				pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"x"}}}}
			}
			err := k8sClient.Create(ctx, pod)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("malformed JSON", `[{"name":"web",`, false,
			"metadata.annotations["+key+"]: Invalid value: "),
		Entry("not an array", `{"name":"web"}`, false, "must be a JSON array"),
		Entry("unknown field", `[{"name":"web","livenessProbe":{"exec":{"command":["x"]},"periodSecond":1}}]`, false,
			`unknown field "[0].livenessProbe.periodSecond"`),
		Entry("unknown container", `[{"name":"nginx","livenessProbe":{"exec":{"command":["x"]}}}]`, false,
			`container "nginx": metadata.annotations[`+key+`][0].name: Invalid value: "nginx": must be the name of a container or of a restartable init container of the pod`),
		Entry("plain init container", `[{"name":"migrate","livenessProbe":{"exec":{"command":["x"]}}}]`, false,
			`[0].name: Invalid value: "migrate"`),
		Entry("duplicate entries", `[{"name":"web","livenessProbe":{"exec":{"command":["x"]}}},{"name":"web","livenessProbe":{"exec":{"command":["y"]}}}]`, false,
			`metadata.annotations[`+key+`][1].name: Duplicate value: "web"`),
		Entry("missing probe", `[{"name":"web"}]`, false, `[0].livenessProbe: Required value`),
		Entry("invalid probe", `[{"name":"worker","livenessProbe":{"exec":{"command":["x"]},"successThreshold":3}}]`, false,
			`container "worker": metadata.annotations[`+key+`][0].livenessProbe.successThreshold: Invalid value: 3: must be 1`),
		Entry("named port the container lacks", `[{"name":"worker","livenessProbe":{"tcpSocket":{"port":"http"}}}]`, false,
			`must be the name of a port of container "worker"`),
		Entry("probe both in the spec and the annotation", valid, true,
			`container "web": spec.containers[0].livenessProbe: Forbidden: the container already has a liveness probe in annotation `+key),
		Entry("over 64 KiB", `[{"name":"web","livenessProbe":{"exec":{"command":["`+strings.Repeat("x", 64*1024)+`"]}}}]`, false,
			"may not be more than 65536 bytes"),
	)
})
