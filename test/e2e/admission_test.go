//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// On a real node: the probe keys are immutable in the apiserver itself, the
// probe's output stays in the pod's namespace, and a Job's pods keep their native probe.

const immutabilityPolicy = "enhanced-liveness-operator-pod-probe-immutable"

// namespaceUser returns a client acting as a user bound to the "edit" ClusterRole in ns:
// someone who may patch pods there, and nothing more.
func namespaceUser(ns, user string) client.Client {
	GinkgoHelper()
	bindInNamespace(ns, user, "edit")
	cfg, err := clientcmd.BuildConfigFromFlags("", envOr("KUBECONFIG", ""))
	Expect(err).NotTo(HaveOccurred())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// bindInNamespace binds user to the ClusterRole role in ns only (a RoleBinding <user>-<role>).
func bindInNamespace(ns, user, role string) {
	GinkgoHelper()
	Expect(k8s.Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user + "-" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
}

// editProbeContext patches the pod's probe-context annotation to a command of the editor's choosing.
func editProbeContext(c client.Client, pod *corev1.Pod, attempt int) error {
	evil := fmt.Sprintf(`[{"name":"app","livenessProbe":{"exec":{"command":["/app","check","-sleep","%dms"]}}}]`, attempt)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, appsv1alpha1.AnnotationProbeContext, evil)
	return c.Patch(context.Background(), pod.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch)))
}

// expectRefusedByApiserver: the edit was refused with the policy's message naming the annotation.
func expectRefusedByApiserver(err error) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "refused as Forbidden: %v", err)
	Expect(err.Error()).To(ContainSubstring("metadata.annotations[" + appsv1alpha1.AnnotationProbeContext + "]: Forbidden: " +
		"may not be added, changed or removed after the pod is created, except by the enhanced-liveness operator"))
}

// scaleManager scales the manager Deployment to n and waits for its pods to match.
func scaleManager(n int32) {
	GinkgoHelper()
	mgr := managerDeployment()
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
	Expect(k8s.Patch(context.Background(), mgr, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), clientKey(mgr), mgr)).To(Succeed())
		var pods corev1.PodList
		g.Expect(k8s.List(context.Background(), &pods, client.InNamespace(operatorNS),
			client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		if n == 0 {
			g.Expect(pods.Items).To(BeEmpty())
		} else {
			g.Expect(mgr.Status.AvailableReplicas).To(Equal(n))
		}
	}).WithTimeout(120 * time.Second).Should(Succeed())
}

var _ = Describe("the probe of an enrolled pod is immutable", Serial, func() {
	It("refuses a namespace user's annotation edit in the apiserver, with the manager running and scaled to 0", func() {
		By("the manager created the admission policy; the apiserver type-checked it without a warning")
		Eventually(func(g Gomega) {
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
			g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: immutabilityPolicy}, p)).To(Succeed())
			g.Expect(p.Status.TypeChecking).NotTo(BeNil())
			g.Expect(p.Status.TypeChecking.ExpressionWarnings).To(BeEmpty())
			g.Expect(p.OwnerReferences).To(HaveLen(1))
			g.Expect(p.OwnerReferences[0].Kind).To(Equal("CustomResourceDefinition"))
		}).WithTimeout(60 * time.Second).Should(Succeed())

		ns := newNamespace("immutable")
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true})
		pod := onlyPod(ns, "web")
		alice := namespaceUser(ns, "e2e-alice")
		Expect(pod.Annotations).To(HaveKey(appsv1alpha1.AnnotationProbeContextSignature))

		By("with the manager running")
		expectRefusedByApiserver(editProbeContext(alice, &pod, 1))
		noLabel := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, appsv1alpha1.LabelEnrolled))
		err := alice.Patch(context.Background(), pod.DeepCopy(), client.RawPatch(types.MergePatchType, noLabel))
		Expect(err).To(MatchError(ContainSubstring("metadata.labels[" + appsv1alpha1.LabelEnrolled + "]: Forbidden")))
		By("other annotations stay editable")
		Expect(alice.Patch(context.Background(), pod.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"team":"web"}}}`)))).To(Succeed())

		By("with the manager scaled to 0: the apiserver still refuses, no webhook needed")
		replicas := ptr.Deref(managerDeployment().Spec.Replicas, 1)
		DeferCleanup(func() {
			By("scaling the manager back and waiting for its webhook")
			scaleManager(replicas)
			Eventually(webhookServing).WithTimeout(60 * time.Second).Should(BeTrue())
		})
		scaleManager(0)
		expectRefusedByApiserver(editProbeContext(alice, &pod, 2))
		expectRefusedByApiserver(editProbeContext(k8s, &pod, 3)) // the cluster admin too

		got := getPod(ns, pod.Name)
		Expect(got.Annotations[appsv1alpha1.AnnotationProbeContext]).To(Equal(pod.Annotations[appsv1alpha1.AnnotationProbeContext]))
	})

	It("keeps the probe's output out of the cluster-scoped NodePodProbeReport: it says exit code 1, the pod's event the output", func() {
		ns := newNamespace("output")
		deployApp(ns, app{name: "web", replicas: 1, probe: execProbe(), enrolled: true,
			annotations: map[string]string{appsv1alpha1.AnnotationRestartDisabled: appsv1alpha1.TrueValue}})
		pod := onlyPod(ns, "web")
		setSick(pod, true) // `/app check` prints "sick" and exits 1
		Eventually(func(g Gomega) {
			rep := &appsv1alpha1.NodePodProbeReport{}
			g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: pod.Spec.NodeName}, rep)).To(Succeed())
			var msgs []string
			if ps := rep.Status.Pod(pod.UID); ps != nil {
				for _, s := range ps.ProbeStates {
					if s.State == appsv1alpha1.ProbeFailed {
						msgs = append(msgs, s.Message)
					}
				}
			}
			g.Expect(msgs).To(ConsistOf("exit code 1"))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		Eventually(hasEvent(ns, pod.Name, "Unhealthy", daemonReporter, "Liveness probe failed: sick")).
			WithTimeout(30 * time.Second).Should(BeTrue())
	})
})

// sickJob is a Job of the test app (which exits 0 on SIGTERM) under restartPolicy OnFailure with
// an HTTP liveness probe, opted in to enhanced liveness or not.
func sickJob(ns, name string, optIn bool) *batchv1.Job {
	ann := map[string]string{}
	if optIn {
		ann[appsv1alpha1.AnnotationEnabled] = appsv1alpha1.TrueValue
	}
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](6),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}, Annotations: ann},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyOnFailure,
					TerminationGracePeriodSeconds: ptr.To[int64](2),
					Containers: []corev1.Container{{
						Name: appContainer, Image: appImage, ImagePullPolicy: corev1.PullNever,
						LivenessProbe: httpProbe(),
						Ports:         []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					}},
				},
			},
		},
	}
	Expect(k8s.Create(context.Background(), j)).To(Succeed())
	return j
}

var _ = Describe("a Job with restartPolicy OnFailure", func() {
	It("behaves exactly as without the operator: the kubelet's liveness kill restarts the app, the Job does not complete", func() {
		ns := newNamespace("job")
		sickJob(ns, "plain", false)
		sickJob(ns, "opted-in", true)
		var pods [2]corev1.Pod
		Eventually(func(g Gomega) {
			for i, name := range []string{"plain", "opted-in"} {
				running := appPods(ns, name)
				g.Expect(running).To(HaveLen(1))
				pods[i] = running[0]
			}
		}).WithTimeout(90 * time.Second).Should(Succeed())

		By("the opted-in Job's pod kept its native liveness probe and was not enrolled")
		opted := pods[1]
		Expect(opted.Annotations).To(HaveKeyWithValue(appsv1alpha1.AnnotationEnabled, appsv1alpha1.TrueValue))
		Expect(opted.Spec.Containers[0].LivenessProbe).NotTo(BeNil())
		Expect(opted.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))
		Expect(opted.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContext))

		By("both apps fall sick: the kubelet kills and restarts each in place, as it always has")
		for _, p := range pods {
			setSick(p, true)
		}
		for _, p := range pods {
			Eventually(restartCount(ns, p.Name)).WithTimeout(90 * time.Second).Should(BeNumerically(">=", 1))
			Eventually(hasEvent(ns, p.Name, "Killing", "kubelet", "")).WithTimeout(30 * time.Second).Should(BeTrue())
		}
		By("neither Job records a completion; the operator restarted nothing")
		Consistently(func(g Gomega) {
			for _, name := range []string{"plain", "opted-in"} {
				j := &batchv1.Job{}
				g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j)).To(Succeed())
				g.Expect(j.Status.Succeeded).To(BeZero(), "Job %s completed", name)
			}
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Expect(crrsIn(ns)).To(BeEmpty())
		for _, p := range pods {
			Expect(hasEvent(ns, p.Name, "Killing", daemonReporter, "")()).To(BeFalse())
			Expect(strings.Join(eventReasons(ns, p.Name), ",")).NotTo(ContainSubstring("LivenessProbeNot"))
		}
	})
})

func eventReasons(ns, name string) []string {
	var out []string
	for _, e := range eventsAbout(ns, name) {
		out = append(out, e.Reason)
	}
	return out
}
