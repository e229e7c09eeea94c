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

package admissionpolicy

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

const (
	policyNS     = "shop"
	operatorUser = "system:serviceaccount:el-operator:el-manager"
	daemonUser   = "system:serviceaccount:el-operator:el-daemon"
	// alice may get, patch and update pods (and their status, and bind them) in policyNS.
	alice = "alice"
)

// clientAs impersonates user (authenticated, no groups granting more than its RBAC).
func clientAs(user string) client.Client {
	GinkgoHelper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	cl, err := client.New(c, client.Options{Scheme: testutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return cl
}

// grantPodEditing lets user edit pods of ns (and be the operator, for operatorUser).
func grantPodEditing(ns string, users ...string) {
	GinkgoHelper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pod-editor"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"pods", "pods/status", "pods/binding"},
		Verbs: []string{"get", "list", "patch", "update", "create"},
	}}}
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pod-editors"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}}
	for _, u := range users {
		rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	Expect(k8sClient.Create(ctx, rb)).To(Succeed())
}

// enrolledPod is what the pod webhook leaves: opted in, probe context, signature, label.
func enrolledPod(name string) *corev1.Pod {
	GinkgoHelper()
	p := testutil.NewPod(policyNS, name).Enrolled().Annotations(map[string]string{
		appsv1alpha1.AnnotationEnabled:      "true",
		appsv1alpha1.AnnotationProbeContext: `[{"name":"app","livenessProbe":{"exec":{"command":["/bin/check"]}}}]`,
		// Its value does not matter here: the policy keeps whatever the webhook wrote.
		appsv1alpha1.AnnotationProbeContextSignature: "v1.1700000000.c2lnbmF0dXJl",
	}).Build()
	Expect(k8sClient.Create(ctx, p)).To(Succeed())
	return p
}

func mergePatch(c client.Client, pod *corev1.Pod, patch string) error {
	return c.Patch(ctx, pod.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch)))
}

func annotationPatch(key string, value any) string {
	v := "null"
	if s, ok := value.(string); ok {
		v = fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, key, v)
}

func labelPatch(key string, value any) string {
	v := "null"
	if s, ok := value.(string); ok {
		v = fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, key, v)
}

// expectDenied: err is the policy's Forbidden denial naming field and stating the rule.
func expectDenied(err error, field string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
	Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '" + Name + "'"))
	Expect(err.Error()).To(ContainSubstring(field + ": Forbidden: " + probecontext.ImmutableRule))
}

// waitForEnforcement returns once the apiserver enforces the policy (it loads a new one within a
// second or so), probing with edits of canary's label that each change its value.
func waitForEnforcement(c client.Client, canary *corev1.Pod) {
	GinkgoHelper()
	n := 0
	Eventually(func() error {
		n++
		return mergePatch(c, canary, labelPatch(appsv1alpha1.LabelEnrolled, fmt.Sprint(n)))
	}, specTimeout).Should(MatchError(ContainSubstring(probecontext.LabelPath(appsv1alpha1.LabelEnrolled).String())))
}

var _ = Describe("Immutability ValidatingAdmissionPolicy", Ordered, func() {
	var (
		stop     func()
		crd      *metav1.PartialObjectMetadata
		pod      *corev1.Pod
		asAlice  client.Client
		asOp     client.Client
		ctxAnn   = probecontext.AnnotationPath(appsv1alpha1.AnnotationProbeContext).String()
		labelFld = probecontext.LabelPath(appsv1alpha1.LabelEnrolled).String()
	)

	startManager := func() {
		var err error
		stop, err = testutil.StartManager(ctx, cfg, ctrl.Options{Cache: managercache.Options(managercache.Config{OperatorNamespace: policyNS, Strip: true})},
			func(mgr ctrl.Manager) error {
				return (&Reconciler{Client: mgr.GetClient(), OperatorUsername: operatorUser, DaemonUsername: daemonUser}).SetupWithManager(mgr)
			})
		Expect(err).NotTo(HaveOccurred())
	}

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: policyNS}})).To(Succeed())
		grantPodEditing(policyNS, alice, operatorUser)
		asAlice, asOp = clientAs(alice), clientAs(operatorUser)
		crd = &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(schemaCRD)
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: OwnerCRD}, crd)).To(Succeed())
		startManager()
	})
	AfterAll(func() {
		if stop != nil {
			stop()
		}
	})

	It("creates the policy and its binding at start, owned by the NodePodProbe CRD", func() {
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: Name}, policy)).To(Succeed())
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: Name}, binding)).To(Succeed())
		}, specTimeout).Should(Succeed())
		// (Type checking is reported by kube-controller-manager, which envtest lacks: the real-node
		// e2e suite checks it.)
		for _, obj := range []client.Object{policy, binding} {
			// envtest runs no garbage collector: a reference with the CRD's real UID, kind and API
			// version is what lets the collector remove these objects when the CRD is deleted.
			Expect(obj.GetOwnerReferences()).To(ConsistOf(metav1.OwnerReference{
				APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.Name, UID: crd.UID,
			}))
		}
		Expect(binding.Spec.PolicyName).To(Equal(Name))
		Expect(binding.Spec.ValidationActions).To(ConsistOf(admissionregistrationv1.Deny))
	})

	It("creates the daemons' node-scope policy too, and puts it back after an edit", func() {
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: DaemonNodeScopeName}, policy)).To(Succeed())
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: DaemonNodeScopeName}, binding)).To(Succeed())
		}, specTimeout).Should(Succeed())
		for _, obj := range []client.Object{policy, binding} {
			Expect(obj.GetOwnerReferences()).To(ConsistOf(metav1.OwnerReference{
				APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.Name, UID: crd.UID,
			}))
		}
		Expect(binding.Spec.PolicyName).To(Equal(DaemonNodeScopeName))
		Expect(policy.Spec.MatchConditions).To(ConsistOf(admissionregistrationv1.MatchCondition{
			Name: "is-node-daemon", Expression: `request.userInfo.username == "` + daemonUser + `"`}))

		By("the daemon of node-a is refused another node's NodePodProbeReport status")
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "el-daemon-status"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{appsv1alpha1.GroupVersion.Group}, Resources: []string{"nodepodprobereports/status"}, Verbs: []string{"patch"}}}}
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "el-daemon-status"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: daemonUser}}})).To(Succeed())
		for _, n := range []string{"scope-a", "scope-b"} {
			Expect(k8sClient.Create(ctx, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
		}
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: daemonUser, Groups: []string{"system:authenticated"},
			Extra: map[string][]string{nodeNameExtra: {"scope-a"}}}
		daemonA, err := client.New(c, client.Options{Scheme: testutil.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		status := client.RawPatch(types.MergePatchType, []byte(`{"status":{"probedPods":1}}`))
		Eventually(func() string {
			err := daemonA.Status().Patch(ctx, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "scope-b"}}, status)
			if err == nil {
				return ""
			}
			return err.Error()
		}, specTimeout).Should(ContainSubstring("the node daemon of node scope-a may write only NodePodProbeReport scope-a, not scope-b"))
		Expect(daemonA.Status().Patch(ctx, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "scope-a"}}, status)).To(Succeed())

		By("an added match condition that would switch it off is taken out")
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: DaemonNodeScopeName}, policy)).To(Succeed())
		want := policy.Spec.DeepCopy()
		policy.Spec.MatchConditions = append(policy.Spec.MatchConditions,
			admissionregistrationv1.MatchCondition{Name: "never", Expression: "false"})
		Expect(k8sClient.Update(ctx, policy)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: DaemonNodeScopeName}, policy)).To(Succeed())
			g.Expect(policy.Spec).To(Equal(*want))
		}, specTimeout).Should(Succeed())
	})

	It("leaves RestartHolds to the manager: a cluster admin may not forge, edit or delete one, the garbage collector may delete or orphan one", func() {
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Name: RestartHoldsName}, policy)
		}, specTimeout).Should(Succeed())
		Expect(policy.OwnerReferences).To(ConsistOf(metav1.OwnerReference{
			APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.Name, UID: crd.UID}))
		gc, nsController := HoldDeleters[0], HoldDeleters[1]
		Expect(gc).To(Equal("system:serviceaccount:kube-system:generic-garbage-collector"))
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "el-holds"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{policyv1alpha1.GroupVersion.Group}, Resources: []string{"restartholds"},
			Verbs: []string{"get", "create", "update", "patch", "delete"}}}}
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "el-holds"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser},
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: gc},
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: nsController}}})).To(Succeed())
		hold := func(name string) *policyv1alpha1.RestartHold {
			return &policyv1alpha1.RestartHold{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: name},
				Status: policyv1alpha1.RestartHoldStatus{Workload: policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
					Container: "app", Reason: string(policyv1alpha1.HoldFailureStorm), Onset: metav1.Now(), WaitStart: metav1.Now()}}
		}
		refused := func(err error) {
			GinkgoHelper()
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
			Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '" + RestartHoldsName + "'"))
			Expect(err.Error()).To(ContainSubstring("RestartHolds are the enhanced-liveness manager's records of its held restarts"))
		}
		By("a cluster admin may not create one")
		Eventually(func() error { return k8sClient.Create(ctx, hold("forged")) }, specTimeout).Should(MatchError(ContainSubstring(RestartHoldsName)))
		refused(k8sClient.Create(ctx, hold("forged")))

		By("the manager creates and updates one; the admin may neither end it early nor delete it")
		h := hold("web-app")
		Expect(asOp.Create(ctx, h)).To(Succeed())
		h.Status.Canaries = 3
		Expect(asOp.Update(ctx, h)).To(Succeed())
		h.Status.NextCanary = &metav1.Time{}
		refused(k8sClient.Update(ctx, h))
		refused(k8sClient.Delete(ctx, h))

		By("the garbage collector deletes it with its workload")
		Expect(clientAs(gc).Delete(ctx, h)).To(Succeed())

		expectHoldDeletersMayOnlyChangeOwnership(asOp, clientAs(gc), clientAs(nsController), hold("web-orphaned"), refused)
	})

	It("refuses a namespace user who adds, changes or removes a protected annotation or the label", func() {
		pod = enrolledPod("web-0")
		waitForEnforcement(asAlice, enrolledPod("canary-0"))

		evil := `[{"name":"app","livenessProbe":{"exec":{"command":["/bin/sh","-c","id"]}}}]`
		expectDenied(mergePatch(asAlice, pod, annotationPatch(appsv1alpha1.AnnotationProbeContext, evil)), ctxAnn)
		expectDenied(mergePatch(asAlice, pod, annotationPatch(appsv1alpha1.AnnotationProbeContext, nil)), ctxAnn)
		for _, k := range []string{appsv1alpha1.AnnotationKruiseProbeContext, appsv1alpha1.AnnotationKruiseEnabled} {
			expectDenied(mergePatch(asAlice, pod, annotationPatch(k, "true")), probecontext.AnnotationPath(k).String())
		}
		expectDenied(mergePatch(asAlice, pod, annotationPatch(appsv1alpha1.AnnotationEnabled, "false")),
			probecontext.AnnotationPath(appsv1alpha1.AnnotationEnabled).String())
		expectDenied(mergePatch(asAlice, pod, annotationPatch(appsv1alpha1.AnnotationProbeContextSignature, nil)),
			probecontext.AnnotationPath(appsv1alpha1.AnnotationProbeContextSignature).String())
		expectDenied(mergePatch(asAlice, pod, labelPatch(appsv1alpha1.LabelEnrolled, nil)), labelFld)
		By("the mode label, added to a pod admitted without one, would take its restarts from the operator")
		expectDenied(mergePatch(asAlice, pod, labelPatch(appsv1alpha1.LabelMode, appsv1alpha1.ModeShadow)),
			probecontext.LabelPath(appsv1alpha1.LabelMode).String())
		By("a cluster admin is no exception")
		expectDenied(mergePatch(k8sClient, pod, labelPatch(appsv1alpha1.LabelEnrolled, "false")), labelFld)

		By("other annotations and labels stay editable")
		Expect(mergePatch(asAlice, pod, annotationPatch("team", "shop"))).To(Succeed())
		Expect(mergePatch(asAlice, pod, labelPatch("tier", "web"))).To(Succeed())
		Expect(mergePatch(asAlice, pod, annotationPatch(appsv1alpha1.AnnotationRestartDisabled, "true"))).To(Succeed())
	})

	It("refuses making a plain pod look enrolled, in any namespace, kube-system included", func() {
		for _, ns := range []string{policyNS, metav1.NamespaceSystem} {
			plain := testutil.NewPod(ns, "plain").Build()
			Expect(k8sClient.Create(ctx, plain)).To(Succeed())
			expectDenied(mergePatch(k8sClient, plain, labelPatch(appsv1alpha1.LabelEnrolled, "true")), labelFld)
			expectDenied(mergePatch(k8sClient, plain, annotationPatch(appsv1alpha1.AnnotationProbeContext, "[]")), ctxAnn)
		}
	})

	It("refuses the same through the status subresource and a Binding, and lets status updates through", func() {
		st := pod.DeepCopy()
		Expect(asAlice.Get(ctx, client.ObjectKeyFromObject(st), st)).To(Succeed())
		st.Status.Phase = corev1.PodRunning // what the kubelet does, many times a pod's life
		Expect(asAlice.Status().Update(ctx, st)).To(Succeed())

		st.Labels[appsv1alpha1.LabelEnrolled] = "no"
		expectDenied(asAlice.Status().Update(ctx, st), labelFld)

		unbound := enrolledPod("unbound")
		bind := func(ann map[string]string) error {
			return asAlice.SubResource("binding").Create(ctx, unbound, &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: unbound.Name, Annotations: ann},
				Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
			})
		}
		expectDenied(bind(map[string]string{appsv1alpha1.AnnotationProbeContext: "[]"}), ctxAnn)
		Expect(bind(map[string]string{"scheduler.example/reason": "fits"})).To(Succeed())
	})

	It("lets the operator itself change them", func() {
		Expect(mergePatch(asOp, pod, annotationPatch(appsv1alpha1.AnnotationEnabled, "false"))).To(Succeed())
		Expect(mergePatch(asOp, pod, labelPatch(appsv1alpha1.LabelEnrolled, nil))).To(Succeed())
	})

	It("puts the policy and the binding back after they are edited or deleted", func() {
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: Name}, binding)).To(Succeed())
		binding.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}
		Expect(k8sClient.Update(ctx, binding)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: Name}, binding)).To(Succeed())
			g.Expect(binding.Spec.ValidationActions).To(ConsistOf(admissionregistrationv1.Deny))
		}, specTimeout).Should(Succeed())

		By("an added match condition that would switch the policy off, and a narrower namespace selector")
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: Name}, policy)).To(Succeed())
		want := policy.Spec.DeepCopy()
		policy.Spec.MatchConditions = append(policy.Spec.MatchConditions,
			admissionregistrationv1.MatchCondition{Name: "never", Expression: "false"})
		policy.Spec.MatchConstraints.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}
		Expect(k8sClient.Update(ctx, policy)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: Name}, policy)).To(Succeed())
			g.Expect(policy.Spec).To(Equal(*want))
		}, specTimeout).Should(Succeed())

		oldUID := policy.UID
		Expect(k8sClient.Delete(ctx, policy)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: Name}, policy)).To(Succeed())
			g.Expect(policy.UID).NotTo(Equal(oldUID))
		}, specTimeout).Should(Succeed())
	})

	It("keeps refusing while the manager is down", func() {
		// The spec before deletes the policy; the apiserver loads the one the manager puts back
		// within a second or so, and that one must be in force when the manager goes.
		waitForEnforcement(asAlice, enrolledPod("canary-down"))
		stop()
		stop = nil
		other := enrolledPod("web-1")
		expectDenied(mergePatch(asAlice, other, annotationPatch(appsv1alpha1.AnnotationProbeContext, "[]")), ctxAnn)
		expectDenied(mergePatch(asAlice, other, labelPatch(appsv1alpha1.LabelEnrolled, nil)), labelFld)
	})
})

// expectHoldDeletersMayOnlyChangeOwnership: the garbage collector may take a deleted workload's
// reference out of a hold (kubectl delete --cascade=orphan waits for it) and remove the finalizer
// of a foreground deletion, as may the namespace controller; neither may change the hold itself,
// alone or along with its references. envtest runs no garbage collector: its requests are made
// under its identity.
func expectHoldDeletersMayOnlyChangeOwnership(asOp, gc, nsController client.Client, h *policyv1alpha1.RestartHold, refused func(error)) {
	GinkgoHelper()
	web := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "0d7e1a7c-web", Controller: ptr.To(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "web-config", UID: "0d7e1a7c-cm"}
	h.OwnerReferences = []metav1.OwnerReference{web, other}
	Expect(asOp.Create(ctx, h)).To(Succeed())

	By("the garbage collector may not change the hold, nor its labels, with or without its references")
	get := func() *policyv1alpha1.RestartHold {
		GinkgoHelper()
		cur := &policyv1alpha1.RestartHold{}
		Expect(asOp.Get(ctx, client.ObjectKeyFromObject(h), cur)).To(Succeed())
		return cur
	}
	edited := get()
	edited.Status.Canaries = 5
	refused(gc.Update(ctx, edited))
	edited.OwnerReferences = []metav1.OwnerReference{other}
	refused(gc.Update(ctx, edited))
	labelled := get()
	labelled.Labels = map[string]string{"team": "shop"}
	refused(gc.Update(ctx, labelled))

	By("it removes one owner reference by update")
	orphaned := get()
	orphaned.OwnerReferences = []metav1.OwnerReference{other}
	Expect(gc.Update(ctx, orphaned)).To(Succeed())

	By("and the last one as it orphans: a merge patch of the remaining references, the UID as precondition")
	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[],"uid":%q}}`, h.UID)
	Expect(gc.Patch(ctx, get(), client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	Expect(get().OwnerReferences).To(BeEmpty())
	Expect(get().Status.Canaries).To(Equal(h.Status.Canaries))

	By("the namespace controller deletes it in the foreground, then removes the finalizer that left")
	Expect(nsController.Delete(ctx, get(), client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
	terminating := get()
	Expect(terminating.Finalizers).To(ConsistOf(metav1.FinalizerDeleteDependents))
	terminating.Finalizers = nil
	terminating.Status.Canaries = 7
	refused(nsController.Update(ctx, terminating))
	terminating.Status.Canaries = h.Status.Canaries
	Expect(nsController.Update(ctx, terminating)).To(Succeed())
	Expect(apierrors.IsNotFound(asOp.Get(ctx, client.ObjectKeyFromObject(h), &policyv1alpha1.RestartHold{}))).To(BeTrue())
}
