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
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The daemon's settings are given to the manager (--daemon-arg, --daemon-requests,
// --daemon-limits, --daemon-*-port, which cmd/daemon_flags.go turns into this Config): they must
// reach the DaemonSet, stay there whatever someone edits, change when the manager's change, and a
// bad one must never reach it.
var _ = Describe("Daemon settings given to the manager", Ordered, func() {
	const (
		ns          = "elo-daemon-settings"
		managerName = "elo-manager"
	)
	var (
		stop func()
		key  = types.NamespacedName{Namespace: ns, Name: DefaultName}
	)
	settings := func(args ...string) Config {
		return Config{
			Name: DefaultName, Namespace: ns, ServiceAccount: DefaultName,
			MetricsPort: 11290, HealthPort: 11291,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("96Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("384Mi")},
			},
			ExtraArgs: args,
		}
	}
	startManager := func(c Config) {
		var err error
		stop, err = testutil.StartManager(ctx, cfg, ctrl.Options{
			Cache: managercache.Options(managercache.Config{OperatorNamespace: ns, Strip: true}),
		}, func(mgr ctrl.Manager) error {
			return (&Reconciler{Client: mgr.GetClient(), Config: c, OwnerDeployment: managerName}).SetupWithManager(mgr)
		})
		Expect(err).NotTo(HaveOccurred())
	}
	stopManager := func() {
		if stop != nil {
			stop()
			stop = nil
		}
	}
	daemonContainer := func(g Gomega) corev1.Container {
		ds := &appsv1.DaemonSet{}
		g.Expect(k8sClient.Get(ctx, key, ds)).To(Succeed())
		g.Expect(ds.Spec.Template.Spec.Containers).To(HaveLen(1))
		return ds.Spec.Template.Spec.Containers[0]
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
						{Name: "manager", Image: "registry.example/elo:v1"},
					}},
				},
			},
		})).To(Succeed())
		startManager(settings("--memory-limit=128Mi", "--zap-log-level=debug"))
	})

	AfterAll(stopManager)

	It("writes the daemon flags, resources and ports into the DaemonSet", func() {
		Eventually(func(g Gomega) {
			c := daemonContainer(g)
			g.Expect(c.Args).To(ContainElements("--memory-limit=128Mi", "--zap-log-level=debug",
				"--metrics-bind-address=:11290", "--health-probe-bind-address=:11291"))
			g.Expect(c.Resources.Requests.Memory().String()).To(Equal("96Mi"))
			g.Expect(c.Resources.Limits).To(HaveLen(1))
			g.Expect(c.Resources.Limits.Memory().String()).To(Equal("384Mi"))
			g.Expect(c.Ports).To(ContainElement(HaveField("ContainerPort", int32(11291))))
			g.Expect(c.LivenessProbe.HTTPGet.Port.IntValue()).To(Equal(11291))
		}, packagingSpecTimeout).Should(Succeed())
	})

	It("puts them back after someone edits the DaemonSet", func() {
		Eventually(func() error {
			ds := &appsv1.DaemonSet{}
			if err := k8sClient.Get(ctx, key, ds); err != nil {
				return err
			}
			c := &ds.Spec.Template.Spec.Containers[0]
			c.Args = []string{"--memory-limit=1Gi"}
			c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("2Gi")
			return k8sClient.Update(ctx, ds)
		}, packagingSpecTimeout).Should(Succeed())

		Eventually(func(g Gomega) {
			c := daemonContainer(g)
			g.Expect(c.Args).To(ContainElements("--memory-limit=128Mi", "--zap-log-level=debug"))
			g.Expect(c.Args).NotTo(ContainElement("--memory-limit=1Gi"))
			g.Expect(c.Resources.Limits.Memory().String()).To(Equal("384Mi"))
		}, packagingSpecTimeout).Should(Succeed())
	})

	It("follows a changed setting when the manager restarts with it, keeping none of the old", func() {
		stopManager()
		startManager(settings("--memory-limit=96Mi"))
		Eventually(func(g Gomega) {
			c := daemonContainer(g)
			g.Expect(c.Args).To(ContainElement("--memory-limit=96Mi"))
			g.Expect(c.Args).NotTo(ContainElement("--memory-limit=128Mi"))
			g.Expect(c.Args).NotTo(ContainElement("--zap-log-level=debug"))
		}, packagingSpecTimeout).Should(Succeed())
	})

	It("refuses a bad setting with an error naming it and leaves the DaemonSet as it is", func() {
		before := &appsv1.DaemonSet{}
		Expect(k8sClient.Get(ctx, key, before)).To(Succeed())

		for _, bad := range []struct {
			args []string
			want string
		}{
			{[]string{"--memory-limits=1Gi"}, `daemon argument "--memory-limits=1Gi": the daemon has no flag --memory-limits`},
			{[]string{"--cri-endpoint=unix:///x.sock"}, "--cri-endpoint is set by the manager from the manager flag --daemon-cri-endpoint"},
			{[]string{"--memory-limit=lots"}, `--memory-limit "lots": must be auto, 0 or a quantity`},
		} {
			r := &Reconciler{Client: k8sClient, APIReader: k8sClient, Config: settings(bad.args...), OwnerDeployment: managerName}
			_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
			Expect(err).To(MatchError(ContainSubstring(bad.want)))
			Expect(err).To(MatchError(ContainSubstring("cannot build the daemon DaemonSet")))
			// Terminal: the settings will not fix themselves, so the error is not retried.
			Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeTrue(), "terminal error: %v", err)
		}

		after := &appsv1.DaemonSet{}
		Expect(k8sClient.Get(ctx, key, after)).To(Succeed())
		Expect(after.Generation).To(Equal(before.Generation))
		Expect(after.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--memory-limit=96Mi"))
	})
})
