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

package trust

import (
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	eltestutil "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

const sealNS = "seal"

// staticKeys signs with the suites' key and trusts it.
type staticKeys struct{ eltestutil.StaticKeys }

const webContext = `[{"name":"web","livenessProbe":{"exec":{"command":["/bin/check"]}}}]`

func enrolledPod(name string) *corev1.Pod {
	return eltestutil.NewPod(sealNS, name).Enrolled().Containers("web").
		Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: webContext}).Build()
}

func sealOf(pod *corev1.Pod) func() string {
	return func() string {
		p := &corev1.Pod{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return "error: " + err.Error()
		}
		return p.Annotations[appsv1alpha1.AnnotationProbeContextSeal]
	}
}

func expectSealed(pod *corev1.Pod) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		p := &corev1.Pod{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), p)).To(Succeed())
		id, err := signature.VerifySeal(eltestutil.TrustedKeys(), p)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(id).To(Equal(eltestutil.SigningKey.ID))
	}, "10s").Should(Succeed())
}

func notTrustedNotes(name string) []string {
	var list eventsv1.EventList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(sealNS))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == ReasonNotTrusted && e.Type == corev1.EventTypeWarning {
			out = append(out, e.Note)
		}
	}
	return out
}

func expectNotTrusted(pod *corev1.Pod, why string) {
	GinkgoHelper()
	Eventually(func() []string { return notTrustedNotes(pod.Name) }, "10s").Should(ContainElement(And(
		ContainSubstring("liveness probes of pod "+sealNS+"/"+pod.Name+" are not run: "),
		ContainSubstring(why),
		ContainSubstring("re-create the pod (for a workload: kubectl rollout restart)"))))
	Consistently(sealOf(pod), "1s").Should(BeEmpty(), "never sealed")
}

var _ = Describe("the seal controller", Ordered, func() {
	var stop func()
	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sealNS}})).To(Succeed())
		var err error
		stop, err = eltestutil.StartManager(ctx, cfg, ctrl.Options{
			Cache: managercache.Options(managercache.Config{OperatorNamespace: "el-operator", Strip: true}),
		}, func(mgr ctrl.Manager) error {
			if err := managercache.AddIndexes(ctx, mgr); err != nil {
				return err
			}
			return (&SealReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("probe-seal-controller"),
				Keys: staticKeys{}, Trust: eltestutil.StaticKeys{}, OperatorNamespace: "el-operator"}).SetupWithManager(mgr)
		})
		Expect(err).NotTo(HaveOccurred())
	})
	AfterAll(func() { stop() })

	It("seals a pod the webhook admitted, bound to its UID", func() {
		before := testutil.ToFloat64(Sealed.WithLabelValues("admission"))
		pod := eltestutil.Admit(enrolledPod("admitted"))
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectSealed(pod)
		// Counted once the seal's patch returned, a moment after the seal is visible.
		Eventually(func() float64 { return testutil.ToFloat64(Sealed.WithLabelValues("admission")) - before }).Should(BeEquivalentTo(1))
	})

	It("seals a pod named from generateName", func() {
		pod := enrolledPod("")
		pod.GenerateName = "gen-"
		Expect(k8sClient.Create(ctx, eltestutil.Admit(pod))).To(Succeed())
		expectSealed(pod)
	})

	It("never seals a pod created with the enrolled label and a probe context but no signature, whenever created", func() {
		pod := enrolledPod("forged") // as created while the webhook did not answer
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectNotTrusted(pod, "it has no "+appsv1alpha1.AnnotationProbeContextSignature+" annotation")
	})

	It("refuses a signature copied from another pod, even while both exist", func() {
		first := enrolledPod("")
		first.GenerateName = "web-"
		Expect(k8sClient.Create(ctx, eltestutil.Admit(first))).To(Succeed())
		expectSealed(first)
		copied := enrolledPod("")
		copied.GenerateName = "web-"
		copied.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = first.Annotations[appsv1alpha1.AnnotationProbeContextSignature]
		Expect(k8sClient.Create(ctx, copied)).To(Succeed())
		expectNotTrusted(copied, "its admission signature was made for pod "+sealNS+"/"+first.Name+", which was created first")

		By("and after the first pod is gone (the controller remembers what it sealed)")
		Expect(k8sClient.Delete(ctx, first, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(first), &corev1.Pod{}))
		}).
			Should(BeTrue())
		again := enrolledPod("")
		again.GenerateName = "web-"
		again.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = first.Annotations[appsv1alpha1.AnnotationProbeContextSignature]
		Expect(k8sClient.Create(ctx, again)).To(Succeed())
		// Whether the cache still shows the first pod or not, the copy is refused.
		expectNotTrusted(again, "its admission signature was made for pod ")
	})

	It("refuses a signature copied onto a pod of another name", func() {
		src := eltestutil.Admit(enrolledPod("src"))
		copied := enrolledPod("copy")
		copied.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = src.Annotations[appsv1alpha1.AnnotationProbeContextSignature]
		Expect(k8sClient.Create(ctx, copied)).To(Succeed())
		expectNotTrusted(copied, "its admission signature does not match")
	})

	It("re-seals a pod whose seal was copied from another pod", func() {
		a := eltestutil.Admit(enrolledPod("holder"))
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		expectSealed(a)
		b := eltestutil.Admit(enrolledPod("taker"))
		b.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = sealOf(a)()
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		expectSealed(b)
		Expect(sealOf(b)()).NotTo(Equal(sealOf(a)()))
	})

	It("refuses an HMAC signature (v1.<time>.<MAC>, an unreleased build's): only the admission signature is evidence", func() {
		pod := enrolledPod("hmac-signed")
		pod.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = fmt.Sprintf("v1.%d.%s", time.Now().Unix(),
			base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("m", 32))))
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		expectNotTrusted(pod, "is not a v2 signature")
		Consistently(sealOf(pod), "2s").Should(BeEmpty())
	})

	It("seals nothing in kube-system or the operator namespace", func() {
		for _, ns := range []string{"el-operator"} {
			Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
			pod := eltestutil.NewPod(ns, "sneaky").Enrolled().Containers("web").
				Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: webContext}).Build()
			Expect(k8sClient.Create(ctx, eltestutil.Admit(pod))).To(Succeed())
			Consistently(sealOf(pod), "2s").Should(BeEmpty())
		}
	})

	It("seals each of 50 pods created at once exactly once", func() {
		var wg sync.WaitGroup
		pods := make([]*corev1.Pod, 50)
		for i := range pods {
			pods[i] = enrolledPod("")
			pods[i].GenerateName = "burst-"
			wg.Add(1)
			go func(p *corev1.Pod) {
				defer GinkgoRecover()
				defer wg.Done()
				Expect(k8sClient.Create(ctx, eltestutil.Admit(p))).To(Succeed())
			}(pods[i])
		}
		wg.Wait()
		for _, p := range pods {
			expectSealed(p)
		}
	})
})
