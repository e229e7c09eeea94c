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

package daemonset

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

var _ = Describe("Daemon DaemonSet controller", Ordered, func() {
	const (
		ns           = "elo-daemonset-test"
		managerName  = "elo-manager"
		managerImage = "registry.example/elo:v1.2.3"
	)
	var (
		stop func()
		key  = types.NamespacedName{Namespace: ns, Name: DefaultName}
	)

	getDS := func() (*appsv1.DaemonSet, error) {
		ds := &appsv1.DaemonSet{}
		return ds, k8sClient.Get(ctx, key, ds)
	}

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		sel := map[string]string{"app.kubernetes.io/name": "elo-manager"}
		Expect(k8sClient.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: managerName, Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: sel},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: sel},
					Spec: corev1.PodSpec{Containers: []corev1.Container{
						{Name: "kube-rbac-proxy", Image: "registry.example/proxy:v1"},
						{Name: "manager", Image: managerImage},
					}},
				},
			},
		})).To(Succeed())

		var err error
		stop, err = testutil.StartManager(ctx, cfg, ctrl.Options{
			Cache: managercache.Options(managercache.Config{OperatorNamespace: ns, Strip: true}),
		}, func(mgr ctrl.Manager) error {
			return (&Reconciler{
				Client: mgr.GetClient(),
				Config: Config{
					Name: DefaultName, Namespace: ns, ServiceAccount: DefaultName,
					MetricsPort: DefaultMetricsPort, HealthPort: DefaultHealthPort,
					Resources: DefaultResources(),
				},
				OwnerDeployment: managerName,
			}).SetupWithManager(mgr)
		})
		Expect(err).NotTo(HaveOccurred())
	})

	AfterAll(func() {
		if stop != nil {
			stop()
		}
	})

	It("creates the DaemonSet at start with the manager's image and the manager as owner", func() {
		Eventually(func(g Gomega) {
			ds, err := getDS()
			g.Expect(err).NotTo(HaveOccurred())
			pod := ds.Spec.Template.Spec
			g.Expect(pod.Containers).To(HaveLen(1))
			g.Expect(pod.Containers[0].Image).To(Equal(managerImage))
			g.Expect(pod.HostNetwork).To(BeTrue())
			g.Expect(pod.PriorityClassName).To(Equal("system-node-critical"))
			g.Expect(pod.ServiceAccountName).To(Equal(DefaultName))
			g.Expect(ds.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", ManagedByValue))
			g.Expect(ds.OwnerReferences).To(HaveLen(1))
			g.Expect(ds.OwnerReferences[0].Kind).To(Equal("Deployment"))
			g.Expect(ds.OwnerReferences[0].Name).To(Equal(managerName))
		}, packagingSpecTimeout).Should(Succeed())
	})

	It("repairs an edited DaemonSet", func() {
		ds, err := getDS()
		Expect(err).NotTo(HaveOccurred())
		ds.Spec.Template.Spec.Containers[0].Image = "registry.example/someone-else:latest"
		ds.Spec.Template.Spec.HostNetwork = false
		ds.Spec.Template.Spec.Tolerations = nil
		Expect(k8sClient.Update(ctx, ds)).To(Succeed())

		Eventually(func(g Gomega) {
			ds, err := getDS()
			g.Expect(err).NotTo(HaveOccurred())
			pod := ds.Spec.Template.Spec
			g.Expect(pod.Containers[0].Image).To(Equal(managerImage))
			g.Expect(pod.HostNetwork).To(BeTrue())
			g.Expect(pod.Tolerations).To(ConsistOf(corev1.Toleration{Operator: corev1.TolerationOpExists}))
		}, packagingSpecTimeout).Should(Succeed())
	})

	It("re-creates a deleted DaemonSet", func() {
		ds, err := getDS()
		Expect(err).NotTo(HaveOccurred())
		oldUID := ds.UID
		Expect(k8sClient.Delete(ctx, ds)).To(Succeed())

		Eventually(func(g Gomega) {
			ds, err := getDS()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ds.UID).NotTo(Equal(oldUID))
			g.Expect(ds.Spec.Template.Spec.Containers[0].Image).To(Equal(managerImage))
		}, packagingSpecTimeout).Should(Succeed())
	})

	It("deletes a managed DaemonSet of another name and leaves unmanaged ones alone", func() {
		mk := func(name string, lbls map[string]string) *appsv1.DaemonSet {
			sel := map[string]string{"app.kubernetes.io/name": name}
			return &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
				Spec: appsv1.DaemonSetSpec{
					Selector: &metav1.LabelSelector{MatchLabels: sel},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: sel},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/x:1"}}},
					},
				},
			}
		}
		stale := mk("old-daemon", map[string]string{"app.kubernetes.io/managed-by": ManagedByValue})
		other := mk("someone-elses", map[string]string{"app.kubernetes.io/managed-by": "helm"})
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		Expect(k8sClient.Create(ctx, stale)).To(Succeed())

		Eventually(func() bool {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(stale), &appsv1.DaemonSet{})
			return client.IgnoreNotFound(err) == nil && err != nil
		}, packagingSpecTimeout).Should(BeTrue())
		Consistently(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(other), &appsv1.DaemonSet{})
		}, "2s").Should(Succeed())
		_, err := getDS()
		Expect(err).NotTo(HaveOccurred())
	})
})
