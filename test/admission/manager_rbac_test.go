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

package admission

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/admissionpolicy"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/trust"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/certs"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// projectSecret copies a Secret's keys into dir until ctx ends, as the kubelet's Secret volume
// does in the manager pod (envtest has no kubelet).
func projectSecret(ctx context.Context, key types.NamespacedName, dir string) {
	defer GinkgoRecover()
	for {
		s := &corev1.Secret{}
		if err := k8sClient.Get(ctx, key, s); err == nil {
			for k, v := range s.Data {
				p := filepath.Join(dir, k)
				if old, _ := os.ReadFile(p); !bytes.Equal(old, v) {
					_ = os.WriteFile(p+".tmp", v, 0o600)
					_ = os.Rename(p+".tmp", p)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// The packaging controllers (daemon DaemonSet, webhook certificates) run here as the manager's
// ServiceAccount with exactly the shipped RBAC: the generated manager-role (ClusterRole and the
// namespaced Role) must be enough, including the name-restricted webhook configuration updates.
var _ = Describe("Manager RBAC for the packaging controllers", Ordered, func() {
	const managerUser = "system:serviceaccount:" + shippedNamespace + ":" + shippedPrefix + "controller-manager"
	var (
		stop        func()
		ready       chan struct{}
		mutating    = shippedPrefix + "mutating-webhook-configuration"
		validating  = shippedPrefix + "validating-webhook-configuration"
		secretName  = shippedPrefix + "webhook-server-cert"
		serviceName = shippedPrefix + "webhook-service"
		dsKey       = types.NamespacedName{Namespace: shippedNamespace, Name: daemonset.DefaultName}
		keys        *signature.Store
	)

	BeforeAll(func() {
		err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shippedNamespace}})
		Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
		for _, u := range loadShipped("rbac/service_account.yaml", "rbac/role.yaml", "rbac/role_binding.yaml",
			"rbac/manager_namespace_role_binding.yaml", "default/webhook_cert_secret.yaml") {
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "creating %s %s", u.GetKind(), u.GetName())
		}
		cc := admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{
			Namespace: shippedNamespace, Name: serviceName, Path: new("/x")}}
		none := admissionv1.SideEffectClassNone
		rules := []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
			Rule: admissionv1.Rule{APIGroups: []string{"example.org"}, APIVersions: []string{"v1"}, Resources: []string{"things"}}}}
		Expect(k8sClient.Create(ctx, &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: mutating},
			Webhooks: []admissionv1.MutatingWebhook{{Name: "m.example.org", ClientConfig: cc, Rules: rules,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: validating},
			Webhooks: []admissionv1.ValidatingWebhook{{Name: "v.example.org", ClientConfig: cc, Rules: rules,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}})).To(Succeed())

		asManager := rest.CopyConfig(cfg)
		asManager.Impersonate = rest.ImpersonationConfig{UserName: managerUser,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + shippedNamespace, "system:authenticated"}}
		ready = make(chan struct{})
		certDir := GinkgoT().TempDir()
		pctx, pcancel := context.WithCancel(ctx)
		go projectSecret(pctx, types.NamespacedName{Namespace: shippedNamespace, Name: secretName}, certDir)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		port := l.Addr().(*net.TCPAddr).Port
		Expect(l.Close()).To(Succeed())
		mgrStop, err := testutil.StartManager(ctx, asManager, ctrl.Options{
			Cache: managercache.Options(managercache.Config{OperatorNamespace: shippedNamespace, Strip: true}),
			WebhookServer: certs.GateServer(webhook.NewServer(webhook.Options{
				Host: "127.0.0.1", Port: port, CertDir: certDir}), ready),
		}, func(mgr ctrl.Manager) error {
			if err := (&daemonset.Reconciler{
				Client: mgr.GetClient(),
				Config: daemonset.Config{
					Name: daemonset.DefaultName, Namespace: shippedNamespace, ServiceAccount: daemonset.DefaultName,
					Image: "registry.example/elo:v1", MetricsPort: daemonset.DefaultMetricsPort,
					HealthPort: daemonset.DefaultHealthPort, Resources: daemonset.DefaultResources(),
				},
				OwnerDeployment: shippedPrefix + "controller-manager",
			}).SetupWithManager(mgr); err != nil {
				return err
			}
			if err := (&admissionpolicy.Reconciler{Client: mgr.GetClient(), OperatorUsername: managerUser,
				DaemonUsername: daemonUser}).SetupWithManager(mgr); err != nil {
				return err
			}
			keys = &signature.Store{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
				Namespace: shippedNamespace, Name: signature.DefaultSecretName}
			if err := mgr.Add(keys); err != nil {
				return err
			}
			if err := managercache.AddIndexes(ctx, mgr); err != nil {
				return err
			}
			trusted := &signature.Trust{Reader: mgr.GetClient(), Namespace: shippedNamespace, Keys: keys}
			if err := (&trust.SealReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("rbac-spec-seal"),
				Keys: keys, Trust: trusted, OperatorNamespace: shippedNamespace}).SetupWithManager(mgr); err != nil {
				return err
			}
			if err := (&trust.KeySetReconciler{Client: mgr.GetClient(), Keys: keys, Namespace: shippedNamespace}).SetupWithManager(mgr); err != nil {
				return err
			}
			mgr.GetWebhookServer().Register("/x", http.NotFoundHandler())
			return certs.Setup(mgr, certs.Options{
				Mode: certs.ModeSelf, Namespace: shippedNamespace, SecretName: secretName, ServiceName: serviceName,
				CertDir: certDir, MutatingWebhook: mutating, ValidatingWebhook: validating,
				ControllerName: "rbac-spec-cert-rotator",
			}, ready)
		})
		Expect(err).NotTo(HaveOccurred())
		stop = func() { mgrStop(); pcancel() }
	})

	AfterAll(func() {
		if stop != nil {
			stop()
		}
		removeImmutabilityPolicy()
	})

	It("serves webhooks once its certificate is issued and projected", func() {
		Eventually(ready, "30s").Should(BeClosed())
	})

	It("creates the daemon DaemonSet", func() {
		Eventually(func() error { return k8sClient.Get(ctx, dsKey, &appsv1.DaemonSet{}) }, packagingSpecTimeout).Should(Succeed())
	})

	It("fills the certificate Secret and injects caBundle into both webhook configurations", func() {
		Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: shippedNamespace, Name: secretName}, s)).To(Succeed())
			g.Expect(s.Data).To(HaveKey("ca.crt"))
			m := &admissionv1.MutatingWebhookConfiguration{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: mutating}, m)).To(Succeed())
			g.Expect(m.Webhooks[0].ClientConfig.CABundle).To(Equal(s.Data["ca.crt"]))
			v := &admissionv1.ValidatingWebhookConfiguration{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: validating}, v)).To(Succeed())
			g.Expect(v.Webhooks[0].ClientConfig.CABundle).To(Equal(s.Data["ca.crt"]))
		}, "30s").Should(Succeed())
	})

	It("learns its own identity with a SelfSubjectReview", func() {
		user, err := admissionpolicy.WhoAmI(ctx, clientAs(managerUser, ""), time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(user).To(Equal(managerUser))
	})

	It("creates both admission policies and their bindings, owned by the NodePodProbe CRD", func() {
		Eventually(func(g Gomega) {
			for _, name := range []string{admissionpolicy.Name, admissionpolicy.DaemonNodeScopeName} {
				for _, obj := range []client.Object{&admissionv1.ValidatingAdmissionPolicy{}, &admissionv1.ValidatingAdmissionPolicyBinding{}} {
					g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: name}, obj)).To(Succeed())
					g.Expect(obj.GetOwnerReferences()).To(HaveLen(1))
					g.Expect(obj.GetOwnerReferences()[0].Name).To(Equal(admissionpolicy.OwnerCRD))
				}
			}
		}, packagingSpecTimeout).Should(Succeed())
	})

	It("creates the probe-context signing key, which only it may read, and publishes its public key for the daemons", func() {
		Eventually(keys.Loaded(), packagingSpecTimeout).Should(BeClosed())
		s := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: shippedNamespace, Name: signature.DefaultSecretName}, s)).To(Succeed())
		Expect(s.Data[signature.SecretSigningKeyData]).To(HaveLen(ed25519.SeedSize))
		err := clientAs(daemonUser, "node-1").Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the node daemon may not read the key: %v", err)
		kp, _ := keys.Current()
		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: shippedNamespace, Name: signature.TrustConfigMapName}, cm)).To(Succeed())
		set, errs := signature.DecodeKeySet(cm)
		Expect(errs).To(BeEmpty())
		Expect(set).To(HaveKey(kp.ID))
	})

	It("seals an admitted pod, through the immutability policy that exempts it alone", func() {
		Eventually(keys.Loaded(), packagingSpecTimeout).Should(BeClosed())
		kp, _ := keys.Current()
		suite.CreateNamespace("rbac-sealed")
		pod := testutil.NewPod("rbac-sealed", "web").Enrolled().Containers("web").
			Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: `[{"name":"web","livenessProbe":{"tcpSocket":{"port":8080}}}]`}).Build()
		pod.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = signature.SignAdmission(kp, signature.Admission{
			Namespace: pod.Namespace, Name: pod.Name, AnnotationKey: appsv1alpha1.AnnotationProbeContext,
			Value: pod.Annotations[appsv1alpha1.AnnotationProbeContext], Issued: time.Now()})
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			set, _, err := (&signature.Trust{Reader: k8sClient, Namespace: shippedNamespace, Keys: keys}).KeySet(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			_, err = signature.VerifySeal(set, pod)
			g.Expect(err).NotTo(HaveOccurred())
		}, packagingSpecTimeout).Should(Succeed())
	})

	It("may not change admission policies other than its own", func() {
		other := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses-policy"},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
						Rule: admissionv1.Rule{APIGroups: []string{"example.org"}, APIVersions: []string{"v1"}, Resources: []string{"things"}}}}}},
				Validations: []admissionv1.Validation{{Expression: "true"}},
			}}
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		asManager := clientAs(managerUser, "")
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"failurePolicy":"Ignore"}}`))
		err := asManager.Patch(ctx, other, patch)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "patching another policy: %v", err)
	})

	It("may not update webhook configurations other than its own", func() {
		other := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses"}}
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		asManager := clientAs(managerUser, "")
		Expect(asManager.Get(ctx, client.ObjectKeyFromObject(other), other)).To(Succeed())
		other.Labels = map[string]string{"x": "y"}
		err := asManager.Update(ctx, other)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("forbidden"))
	})
})

// removeImmutabilityPolicy deletes the admission policies the manager created and waits until the
// apiserver no longer enforces the immutability one: the suite's other specs edit pods' probe
// annotations freely, and create the node-scope policy themselves.
func removeImmutabilityPolicy() {
	GinkgoHelper()
	for _, name := range []string{admissionpolicy.Name, admissionpolicy.DaemonNodeScopeName} {
		for _, obj := range []client.Object{
			&admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name}},
			&admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}},
		} {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed())
		}
	}
	scratch := testutil.NewPod("default", "policy-gone").Build()
	Expect(k8sClient.Create(ctx, scratch)).To(Succeed())
	n := 0
	Eventually(func() error {
		n++
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"%d"}}}`, appsv1alpha1.LabelEnrolled, n)
		return k8sClient.Patch(ctx, scratch, client.RawPatch(types.MergePatchType, []byte(patch)))
	}, packagingSpecTimeout).Should(Succeed())
	Expect(k8sClient.Delete(ctx, scratch, client.GracePeriodSeconds(0))).To(Succeed())
}
