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

package monitoring

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

const (
	operatorNS = "el-system"
	managerDep = "el-manager"
	// interval is the keeper's discovery interval in these specs (5 minutes in the manager).
	interval = 300 * time.Millisecond
)

var _ = Describe("Keeper", Ordered, func() {
	var (
		keeper  *Keeper
		stop    context.CancelFunc
		stopped chan error
		owner   *appsv1.Deployment

		start      func(time.Duration)
		startAs    func(*rest.Config, client.Reader, time.Duration)
		stopKeeper func()
	)

	get := func(res schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
		return keeper.Dynamic.Resource(res).Namespace(operatorNS).Get(ctx, name, metav1.GetOptions{})
	}
	rule := func() *unstructured.Unstructured {
		GinkgoHelper()
		var u *unstructured.Unstructured
		Eventually(func() error {
			var err error
			u, err = get(PrometheusRule, Names()[0])
			return err
		}, specTimeout).Should(Succeed())
		return u
	}
	alertNames := func(u *unstructured.Unstructured) []string {
		var out []string
		groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "groups")
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				if a, ok := r.(map[string]any)["alert"].(string); ok {
					out = append(out, a)
				}
			}
		}
		return out
	}
	desiredSpec := func(i int) any {
		objs, err := Desired(operatorNS, nil)
		Expect(err).NotTo(HaveOccurred())
		return objs[i].Desired.Object["spec"]
	}

	// start runs a new keeper with the given discovery interval until stopKeeper.
	start = func(every time.Duration) { startAs(cfg, k8sClient, every) }
	startAs = func(restCfg *rest.Config, reader client.Reader, every time.Duration) {
		GinkgoHelper()
		var err error
		keeper, err = New(restCfg, reader, operatorNS, managerDep)
		Expect(err).NotTo(HaveOccurred())
		keeper.Interval = every
		var kctx context.Context
		kctx, stop = context.WithCancel(ctx)
		stopped = make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			stopped <- keeper.Start(kctx)
		}()
	}
	stopKeeper = func() {
		GinkgoHelper()
		stop()
		Eventually(stopped, specTimeout).Should(Receive(BeNil()))
	}

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}})).To(Succeed())
		labels := map[string]string{"app": "manager"}
		owner = &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: managerDep},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "manager:test"}}},
				},
			},
		}
		Expect(k8sClient.Create(ctx, owner)).To(Succeed())

		start(interval)
		DeferCleanup(func() { stopKeeper() })
	})

	It("runs without error and creates nothing while the API is not served", func() {
		Consistently(stopped, 5*interval).ShouldNot(Receive())
		served, err := Served(keeper.Discovery)
		Expect(err).NotTo(HaveOccurred())
		Expect(served).To(BeEmpty())
		_, err = get(PrometheusRule, Names()[0])
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the resource is not served: %v", err)
	})

	It("creates the rule and the ServiceMonitor once the CRDs are installed after it started", func() {
		_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
			Paths: []string{filepath.Join("testdata", "crds")}, ErrorIfPathMissing: true,
		})
		Expect(err).NotTo(HaveOccurred())

		u := rule()
		Expect(alertNames(u)).To(ContainElement("EnhancedLivenessHoldOverMaxHold"))
		Expect(u.Object["spec"]).To(Equal(desiredSpec(0)))
		Expect(u.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "enhanced-liveness-operator"))
		Expect(u.GetOwnerReferences()).To(ConsistOf(HaveField("UID", owner.UID)))

		Eventually(func() error { _, err := get(ServiceMonitor, Names()[1]); return err }, specTimeout).Should(Succeed())
		sm, err := get(ServiceMonitor, Names()[1])
		Expect(err).NotTo(HaveOccurred())
		Expect(sm.GetOwnerReferences()).To(ConsistOf(HaveField("UID", owner.UID)))
		eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		Expect(eps).To(ConsistOf(HaveKeyWithValue("scheme", "https")))
	})

	It("leaves an object in shape unwritten", func() {
		rv := rule().GetResourceVersion()
		Consistently(func() string { return rule().GetResourceVersion() }, 5*interval).Should(Equal(rv))
	})

	It("re-creates a deleted rule at once, from its watch", func() {
		// From here on the interval is an hour: only the watch can bring objects back in time.
		stopKeeper()
		start(time.Hour)
		Eventually(keeper.syncs.Load, specTimeout).Should(BeNumerically(">", 0))
		old := rule()
		Expect(keeper.Dynamic.Resource(PrometheusRule).Namespace(operatorNS).
			Delete(ctx, old.GetName(), metav1.DeleteOptions{})).To(Succeed())
		Eventually(func() (string, error) {
			u, err := get(PrometheusRule, old.GetName())
			if err != nil {
				return "", err
			}
			return string(u.GetUID()), nil
		}, specTimeout).ShouldNot(Equal(string(old.GetUID())))
		Expect(alertNames(rule())).To(ContainElement("EnhancedLivenessHoldOverMaxHold"))
	})

	It("puts back a user's edit of the spec, from its watch, and keeps a user's label", func() {
		u := rule()
		Expect(unstructured.SetNestedSlice(u.Object, []any{map[string]any{
			"name":  "enhanced-liveness",
			"rules": []any{map[string]any{"alert": "Weakened", "expr": "vector(0) > 1"}},
		}}, "spec", "groups")).To(Succeed())
		labels := u.GetLabels()
		labels["release"] = "kube-prometheus-stack"
		u.SetLabels(labels)
		_, err := keeper.Dynamic.Resource(PrometheusRule).Namespace(operatorNS).Update(ctx, u, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())

		Eventually(func() any { return rule().Object["spec"] }, specTimeout).Should(Equal(desiredSpec(0)))
		Expect(rule().GetLabels()).To(HaveKeyWithValue("release", "kube-prometheus-stack"))
	})

	It("puts back the ServiceMonitor's endpoints", func() {
		sm, err := get(ServiceMonitor, Names()[1])
		Expect(err).NotTo(HaveOccurred())
		Expect(unstructured.SetNestedSlice(sm.Object, []any{map[string]any{"port": "http", "scheme": "http"}},
			"spec", "endpoints")).To(Succeed())
		_, err = keeper.Dynamic.Resource(ServiceMonitor).Namespace(operatorNS).Update(ctx, sm, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() (any, error) {
			sm, err := get(ServiceMonitor, Names()[1])
			if err != nil {
				return nil, err
			}
			return sm.Object["spec"], nil
		}, specTimeout).Should(Equal(desiredSpec(1)))
	})

	It("needs no more than the manager's generated Role in its namespace", func() {
		stopKeeper()
		// Both are created again by the keeper running as the manager.
		for i, res := range []schema.GroupVersionResource{PrometheusRule, ServiceMonitor} {
			Expect(keeper.Dynamic.Resource(res).Namespace(operatorNS).
				Delete(ctx, Names()[i], metav1.DeleteOptions{})).To(Succeed())
		}
		const user = "system:serviceaccount:" + operatorNS + ":manager"
		role := generatedRole()
		role.SetNamespace(operatorNS)
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: "manager"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.GetName()},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		})).To(Succeed())
		asManager := rest.CopyConfig(cfg)
		asManager.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		reader, err := client.New(asManager, client.Options{Scheme: k8sClient.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		startAs(asManager, reader, time.Hour)

		u := rule() // created (create), owned (get of the Deployment)
		Expect(u.GetOwnerReferences()).To(ConsistOf(HaveField("UID", owner.UID)))
		Eventually(func() error { _, err := get(ServiceMonitor, Names()[1]); return err }, specTimeout).Should(Succeed())
		Expect(unstructured.SetNestedSlice(u.Object, []any{}, "spec", "groups")).To(Succeed())
		admin, err := dynamic.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		_, err = admin.Resource(PrometheusRule).Namespace(operatorNS).Update(ctx, u, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		// Seen by the watch (list, watch), checked by a dry run and written back (update by name).
		Eventually(func() any { return rule().Object["spec"] }, specTimeout).Should(Equal(desiredSpec(0)))
	})

	It("carries on when the CRDs are removed while it runs", func() {
		Expect(keeper.watching.Load()).To(BeTrue())
		Expect(envtest.UninstallCRDs(cfg, envtest.CRDInstallOptions{
			Paths: []string{filepath.Join("testdata", "crds")}, ErrorIfPathMissing: true,
		})).To(Succeed())
		Eventually(func() ([]schema.GroupVersionResource, error) { return Served(keeper.Discovery) }, specTimeout).Should(BeEmpty())
		// The objects' deletion (with their CRDs) wakes the keeper through its watch; its writes then
		// fail (CRD terminating, resource gone) and are retried within seconds, not at the
		// interval (an hour here), until it finds the API gone and stops its informers.
		Eventually(keeper.watching.Load, "20s").Should(BeFalse())
		Consistently(stopped, time.Second).ShouldNot(Receive())
	})
})

// generatedRole is the namespaced Role of config/rbac/role.yaml (controller-gen, from the
// kubebuilder markers).
func generatedRole() *unstructured.Unstructured {
	GinkgoHelper()
	f, err := os.Open(filepath.Join(testutil.RepoRoot(), "config", "rbac", "role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			Expect(errors.Is(err, io.EOF)).To(BeTrue(), "decoding role.yaml: %v", err)
			break
		}
		if u.GetKind() == "Role" {
			return u
		}
	}
	Fail("config/rbac/role.yaml has no Role")
	return nil
}
