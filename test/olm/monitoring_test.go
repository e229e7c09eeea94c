//go:build olm

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

package olm

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/monitoring"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
)

// monitoringCRDs is the directory of the Prometheus Operator's PrometheusRule and ServiceMonitor
// CRDs that the monitoring envtest suite installs too.
func monitoringCRDs() string {
	root, err := project.Dir()
	Expect(err).NotTo(HaveOccurred())
	return filepath.Join(root, "internal", "controller", "monitoring", "testdata", "crds")
}

// installMonitoringCRDs installs the CRDs for the rest of the ordered container and removes them
// (with whatever objects of theirs are left) at its end.
func installMonitoringCRDs() {
	run(time.Minute, os.Getenv("KUBECTL"), "apply", "--server-side", "-f", monitoringCRDs())
	DeferCleanup(func(context.Context) {
		run(2*time.Minute, os.Getenv("KUBECTL"), "delete", "--ignore-not-found", "--wait=true", "-f", monitoringCRDs())
	})
}

// monitoringObject reads one kept object of the operator namespace.
func monitoringObject(kind, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(monitoring.GroupVersion)
	u.SetKind(kind)
	return u, k8s.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: name}, u)
}

// expectMonitoringObjects: the manager of the OLM install created its PrometheusRule (with the
// hold alert) and its ServiceMonitor, owned by its Deployment, though the bundle carries neither.
func expectMonitoringObjects() {
	names := monitoring.Names()
	Eventually(func(g Gomega) {
		rule, err := monitoringObject("PrometheusRule", names[0])
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(rule.GetOwnerReferences()).To(ConsistOf(And(HaveField("Kind", "Deployment"), HaveField("Name", managerName))))
		groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
		var alerts []any
		for _, grp := range groups {
			rules, _, _ := unstructured.NestedSlice(grp.(map[string]any), "rules")
			for _, r := range rules {
				alerts = append(alerts, r.(map[string]any)["alert"])
			}
		}
		g.Expect(alerts).To(ContainElement("EnhancedLivenessHoldOverMaxHold"))
		sm, err := monitoringObject("ServiceMonitor", names[1])
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(sm.GetOwnerReferences()).To(ConsistOf(HaveField("Name", managerName)))
	}).WithTimeout(2 * time.Minute).Should(Succeed())
}

// expectMonitoringObjectsGone: the garbage collector removed them with the manager Deployment.
func expectMonitoringObjectsGone() {
	Eventually(func(g Gomega) {
		for i, kind := range []string{"PrometheusRule", "ServiceMonitor"} {
			_, err := monitoringObject(kind, monitoring.Names()[i])
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s %s: %v", kind, monitoring.Names()[i], err)
		}
	}).WithTimeout(3 * time.Minute).Should(Succeed())
}
