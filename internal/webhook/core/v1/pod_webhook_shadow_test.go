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
	"slices"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// shopPolicy creates a policy of ns in mode that selects the pods labelled app=shop.
func shopPolicy(ns, name string, mode policyv1alpha1.PolicyMode, enroll bool) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, &policyv1alpha1.EnhancedLivenessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1alpha1.EnhancedLivenessPolicySpec{Mode: mode, Enroll: enroll,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}}},
	})).To(Succeed())
}

// awaitShadow creates opted-in shop pods until one is admitted in Shadow mode: the webhook's
// cache has the namespace's Shadow policy.
func awaitShadow(ns string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		pod := appPod(ns, "", optIn())
		pod.GenerateName = "cache-sync-"
		g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		g.Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelMode, "Shadow"))
	}).Should(Succeed())
}

// expectShadow checks a pod admitted in Shadow mode: enrolled and signed as in Enforce mode, with
// every container's native liveness probe still in its spec and the same probe in the context.
func expectShadow(pod *corev1.Pod) {
	GinkgoHelper()
	Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
	Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelMode, "Shadow"))
	Expect(verifyAdmission(pod)).To(Succeed(), "the webhook signs the probe context in Shadow mode too")
	entries := contextOf(pod)
	Expect(entries).To(HaveLen(3))
	natives := map[string]*corev1.Probe{
		"proxy": pod.Spec.InitContainers[1].LivenessProbe, "web": pod.Spec.Containers[0].LivenessProbe,
		"worker": pod.Spec.Containers[1].LivenessProbe,
	}
	for _, e := range entries {
		native := natives[e.Name]
		Expect(native).NotTo(BeNil(), "container %s keeps its native livenessProbe: the kubelet stays in charge", e.Name)
		Expect(equality.Semantic.DeepEqual(native, e.LivenessProbe)).To(BeTrue(),
			"container %s: the context holds the native probe: %+v, native %+v", e.Name, e.LivenessProbe, native)
	}
	Expect(pod.Spec.Containers[0].LivenessProbe.HTTPGet.Path).To(Equal("/healthz"))
}

var _ = Describe("Pod webhook in Shadow mode", func() {
	It("keeps the native probes of a pod a Shadow policy enrolls, and still writes and signs its probe context", func() {
		const ns = "pods-shadow"
		ensureNamespace(ns)
		shopPolicy(ns, "trial", policyv1alpha1.ModeShadow, true)
		awaitShadow(ns)

		pod := appPod(ns, "trial-0", nil)
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectShadow(pod)

		By("a pod of the namespace the policy does not select is admitted in Enforce mode: its probes move")
		other := appPod(ns, "other-0", optIn())
		other.Labels = map[string]string{"app": "other"}
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		expectEnrolled(other)
	})

	It("admits in Shadow when any policy that selects the pod says Shadow, DryRun (0.1.0) included", func() {
		const ns = "pods-shadow-any"
		ensureNamespace(ns)
		Expect(k8sClient.Create(ctx, &policyv1alpha1.EnhancedLivenessPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "enforce-all"},
			Spec:       policyv1alpha1.EnhancedLivenessPolicySpec{Mode: policyv1alpha1.ModeEnforce},
		})).To(Succeed())
		shopPolicy(ns, "old-dry-run", policyv1alpha1.ModeDryRun, false)
		awaitShadow(ns)

		pod := appPod(ns, "shop-0", optIn())
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectShadow(pod)

		pod = appPod(ns, "db-0", optIn())
		pod.Labels = map[string]string{"app": "db"}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectEnrolled(pod)
	})

	It("gives a probe only the annotation holds to the kubelet too, and says so", func() {
		const ns = "pods-shadow-annotated"
		ensureNamespace(ns)
		shopPolicy(ns, "trial", policyv1alpha1.ModeShadow, false)
		awaitShadow(ns)

		c, warnings := warningClient()
		const valid = `[{"name":"web","livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":3}}]`
		pod := annotated(ns, "kruise-style", appsv1alpha1.AnnotationProbeContext, valid)
		Expect(c.Create(ctx, pod)).To(Succeed())
		Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelMode, "Shadow"))
		Expect(pod.Annotations[appsv1alpha1.AnnotationProbeContext]).To(Equal(valid), "the creator's annotation is kept as written")
		Expect(verifyAdmission(pod)).To(Succeed())
		web := pod.Spec.Containers[0].LivenessProbe
		Expect(web).NotTo(BeNil(), "a Shadow pod's kubelet keeps liveness: the annotated probe is set in the spec too")
		Expect(web.HTTPGet.Path).To(Equal("/healthz"))
		Expect(web.PeriodSeconds).To(BeEquivalentTo(3))
		Expect(warnings.take()).To(ContainElement(And(ContainSubstring(`container "web": its liveness probe from annotation `+
			appsv1alpha1.AnnotationProbeContext+" is set as its livenessProbe too"), ContainSubstring("Shadow mode"))))
	})

	It("writes the mode itself, whatever label the creator wrote, and keeps it", func() {
		const ns = "pods-shadow-label"
		ensureNamespace(ns)
		shopPolicy(ns, "trial", policyv1alpha1.ModeShadow, false)
		awaitShadow(ns)

		By("a creator's label on a pod the webhook does not enroll is removed")
		plain := appPod(ns, "plain", nil)
		plain.Labels[appsv1alpha1.LabelMode] = "Enforce"
		Expect(k8sClient.Create(ctx, plain)).To(Succeed())
		expectUntouched(plain)

		By("a creator's Enforce on a pod a Shadow policy selects is overwritten")
		pod := appPod(ns, "claims-enforce", optIn())
		pod.Labels[appsv1alpha1.LabelMode] = "Enforce"
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectShadow(pod)

		By("nobody but the operator changes or removes it after admission")
		field := probecontext.LabelPath(appsv1alpha1.LabelMode).String()
		for _, v := range []string{`"Enforce"`, "null"} {
			patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, appsv1alpha1.LabelMode, v))
			expectForbidden(k8sClient.Patch(ctx, pod.DeepCopy(), client.RawPatch(types.MergePatchType, patch)), field)
		}
	})
})

// The webhook may be called again for a pod it already mutated (reinvocationPolicy IfNeeded):
// a Shadow pod's native probes are then both in its spec and in the context. That is the
// webhook's own copy, not a conflict; and should the second call find the pod in Enforce mode,
// the copies leave the spec.
func TestEnrollAgain(t *testing.T) {
	decode := func(pod *corev1.Pod) []probecontext.ContainerProbe {
		var entries []probecontext.ContainerProbe
		if err := json.Unmarshal([]byte(pod.Annotations[appsv1alpha1.AnnotationProbeContext]), &entries); err != nil {
			t.Fatal(err)
		}
		return entries
	}
	pod := appPod("ns", "web-0", optIn())
	for i := range 2 {
		enrolled, _, err := enroll(pod, policyv1alpha1.ModeShadow)
		if err != nil || !enrolled {
			t.Fatalf("call %d: enrolled %v, %v", i+1, enrolled, err)
		}
		if n := len(decode(pod)); n != 3 || pod.Spec.Containers[0].LivenessProbe == nil || pod.Spec.InitContainers[1].LivenessProbe == nil {
			t.Fatalf("call %d in Shadow mode: %d entries, native probes %v %v", i+1, n,
				pod.Spec.Containers[0].LivenessProbe, pod.Spec.InitContainers[1].LivenessProbe)
		}
	}
	before := pod.Annotations[appsv1alpha1.AnnotationProbeContext]
	enrolled, _, err := enroll(pod, policyv1alpha1.ModeEnforce)
	if err != nil || !enrolled {
		t.Fatalf("in Enforce mode: enrolled %v, %v", enrolled, err)
	}
	if pod.Annotations[appsv1alpha1.AnnotationProbeContext] != before {
		t.Fatal("the context changed: it held the probes already")
	}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if c.LivenessProbe != nil {
			t.Fatalf("container %s keeps its native probe in Enforce mode", c.Name)
		}
	}

	// A different probe in the spec and in the context is still a conflict.
	pod = appPod("ns", "web-1", optIn())
	pod.Annotations[appsv1alpha1.AnnotationProbeContext] = `[{"name":"web","livenessProbe":{"exec":{"command":["other"]}}}]`
	if _, _, err := enroll(pod, policyv1alpha1.ModeShadow); err == nil {
		t.Fatal("a container with two different liveness probes was enrolled")
	}
}
