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
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

func patchAnnotation(c client.Client, pod *corev1.Pod, key string, value *string) error {
	v := "null"
	if value != nil {
		v = fmt.Sprintf("%q", *value)
	}
	p := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, key, v)
	return c.Patch(ctx, pod.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(p)))
}

// webhookCalls is the number of requests the validating Pod webhook served.
func webhookCalls() float64 {
	GinkgoHelper()
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_webhook_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "webhook" && l.GetValue() == "/validate--v1-pod" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

func expectForbidden(err error, field string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
	Expect(err.Error()).To(ContainSubstring(`admission webhook "vpod-v1.kb.io" denied the request`))
	Expect(err.Error()).To(ContainSubstring(field + ": Forbidden: " + probecontext.ImmutableRule))
}

var _ = Describe("Pod webhook on UPDATE (immutability without the admission policy)", func() {
	const ns = "pods-immutable"
	BeforeEach(func() { ensureNamespace(ns) })
	ctxField := probecontext.AnnotationPath(appsv1alpha1.AnnotationProbeContext).String()
	labelField := probecontext.LabelPath(appsv1alpha1.LabelEnrolled).String()
	str := func(s string) *string { return &s }

	enrolled := func(name string) *corev1.Pod {
		GinkgoHelper()
		pod := appPod(ns, name, optIn())
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectEnrolled(pod)
		return pod
	}

	It("denies adding, changing or removing a protected annotation or the label, naming it and the rule", func() {
		pod := enrolled("web-0")
		evil := `[{"name":"web","livenessProbe":{"exec":{"command":["/bin/sh","-c","id"]}}}]`
		expectForbidden(patchAnnotation(k8sClient, pod, appsv1alpha1.AnnotationProbeContext, str(evil)), ctxField)
		expectForbidden(patchAnnotation(k8sClient, pod, appsv1alpha1.AnnotationProbeContext, nil), ctxField)
		for _, k := range []string{appsv1alpha1.AnnotationKruiseProbeContext, appsv1alpha1.AnnotationKruiseEnabled,
			appsv1alpha1.AnnotationProbeContextSignature} {
			expectForbidden(patchAnnotation(k8sClient, pod, k, str("x")), probecontext.AnnotationPath(k).String())
		}
		expectForbidden(patchAnnotation(k8sClient, pod, appsv1alpha1.AnnotationEnabled, str("false")),
			probecontext.AnnotationPath(appsv1alpha1.AnnotationEnabled).String())
		noLabel := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, appsv1alpha1.LabelEnrolled))
		expectForbidden(k8sClient.Patch(ctx, pod.DeepCopy(), client.RawPatch(types.MergePatchType, noLabel)), labelField)

		By("through the status subresource too")
		st := pod.DeepCopy()
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(st), st)).To(Succeed())
		st.Status.Phase = corev1.PodRunning
		Expect(k8sClient.Status().Update(ctx, st)).To(Succeed(), "a status update that leaves them alone")
		st.Annotations[appsv1alpha1.AnnotationProbeContext] = evil
		expectForbidden(k8sClient.Status().Update(ctx, st), ctxField)

		By("other annotations stay editable")
		Expect(patchAnnotation(k8sClient, pod, "team", str("shop"))).To(Succeed())
	})

	It("denies making a plain pod look enrolled: adding the label puts it under the webhook's object selector", func() {
		plain := appPod(ns, "plain", nil)
		Expect(k8sClient.Create(ctx, plain)).To(Succeed())
		label := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, appsv1alpha1.LabelEnrolled))
		expectForbidden(k8sClient.Patch(ctx, plain.DeepCopy(), client.RawPatch(types.MergePatchType, label)), labelField)
		withContext := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"true"},"annotations":{%q:"[]"}}}`,
			appsv1alpha1.LabelEnrolled, appsv1alpha1.AnnotationProbeContext))
		expectForbidden(k8sClient.Patch(ctx, plain.DeepCopy(), client.RawPatch(types.MergePatchType, withContext)), ctxField)
		// A probe context alone on a pod that is not enrolled is the admission policy's to refuse
		// (internal/controller/admissionpolicy): nothing maps, seals or probes a pod without the label.
	})

	It("is not called for a pod that is not enrolled: its status updates never wait on the manager", func() {
		plain := appPod(ns, "unrelated", nil)
		Expect(k8sClient.Create(ctx, plain)).To(Succeed())
		pod := enrolled("web-calls")
		before := webhookCalls()

		st := plain.DeepCopy()
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(st), st)).To(Succeed())
		st.Status.Phase = corev1.PodRunning
		st.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		Expect(k8sClient.Status().Update(ctx, st)).To(Succeed())
		Expect(patchAnnotation(k8sClient, plain, "team", str("shop"))).To(Succeed())
		Consistently(webhookCalls, "1s").Should(Equal(before), "an unrelated pod's updates made a webhook call")

		By("an enrolled pod's status update is still seen")
		st = pod.DeepCopy()
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(st), st)).To(Succeed())
		st.Status.Phase = corev1.PodRunning
		Expect(k8sClient.Status().Update(ctx, st)).To(Succeed())
		Eventually(webhookCalls, "5s").Should(Equal(before + 1))
	})

	It("lets the operator change them", func() {
		pod := enrolled("web-op")
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: operatorUser, Groups: []string{"system:masters"}}
		asOperator, err := client.New(c, client.Options{Scheme: testutil.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		Expect(patchAnnotation(asOperator, pod, appsv1alpha1.AnnotationEnabled, str("false"))).To(Succeed())
	})

	It("skips kube-system and the operator's namespace", func() {
		ensureNamespace(operatorNamespace)
		for _, skipped := range []string{metav1.NamespaceSystem, operatorNamespace} {
			pod := appPod(skipped, "skipped-update", nil)
			Expect(k8sClient.Create(ctx, pod)).To(Succeed())
			Expect(patchAnnotation(k8sClient, pod, appsv1alpha1.AnnotationProbeContext, str("[]"))).To(Succeed())
		}
	})

	It("fails open: while the manager is down, updates go through (the admission policy is what holds then)", func() {
		pod := enrolled("web-down")
		suite.StopServingWebhooks()
		DeferCleanup(suite.ServeWebhooks)
		Expect(patchAnnotation(k8sClient, pod, appsv1alpha1.AnnotationEnabled, str("false"))).To(Succeed())
	})
})
