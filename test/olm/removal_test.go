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
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	scorecardv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
)

// namePrefix: every cluster-scoped object of the operator is named with it, OLM's webhook
// configurations included (they are named after the CSV's webhook definitions plus a suffix,
// and carry the CSV as olm.owner).
const namePrefix = "enhanced-liveness"

func runScorecard() {
	root, err := project.Dir()
	Expect(err).NotTo(HaveOccurred())
	bundleDir := filepath.Join(root, "bundle")
	raw, err := os.ReadFile(filepath.Join(bundleDir, "tests", "scorecard", "config.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var cfg scorecardv1alpha3.Configuration
	Expect(yaml.UnmarshalStrict(raw, &cfg)).To(Succeed())
	var want []string
	for _, st := range cfg.Stages {
		for _, t := range st.Tests {
			want = append(want, t.Labels["test"])
		}
	}
	slices.Sort(want)
	Expect(want).NotTo(BeEmpty(), "the scorecard config configures tests")

	ns := newNamespace("scorecard")
	Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
	}).WithTimeout(time.Minute).Should(Succeed(), "the default ServiceAccount of %s", ns)
	out := sdk(8*time.Minute, "scorecard", bundleDir, "--namespace", ns, "--untar-image", untarImage,
		"--wait-time", "300s", "--output", "json")
	var list scorecardv1alpha3.TestList
	Expect(json.Unmarshal([]byte(out), &list)).To(Succeed(), "scorecard JSON output")
	var got []string
	for _, t := range list.Items {
		got = append(got, t.Spec.Labels["test"])
		Expect(t.Status.Results).NotTo(BeEmpty(), "test %s reported no result", t.Spec.Labels["test"])
		for _, r := range t.Status.Results {
			Expect(r.State).To(Equal(scorecardv1alpha3.PassState), "scorecard test %s (%s): %s %v",
				t.Spec.Labels["test"], r.Name, r.Log, r.Errors)
			GinkgoWriter.Printf("scorecard %s: %s\n", r.Name, r.State)
		}
	}
	slices.Sort(got)
	Expect(got).To(Equal(want), "every configured test ran")
}

func removeWithCleanup() {
	sdk(8*time.Minute, "cleanup", packageName, "--namespace", operatorNS, "--timeout", "6m")
	kustomizeOLMExtras("delete", "--wait=true")

	By("no CSV, Deployment or DaemonSet is left in " + operatorNS)
	Eventually(func(g Gomega) {
		var csvs operatorsv1alpha1.ClusterServiceVersionList
		g.Expect(k8s.List(ctx, &csvs, client.InNamespace(operatorNS))).To(Succeed())
		g.Expect(csvs.Items).To(BeEmpty(), "CSVs")
		var deps appsv1.DeploymentList
		g.Expect(k8s.List(ctx, &deps, client.InNamespace(operatorNS))).To(Succeed())
		g.Expect(deps.Items).To(BeEmpty(), "Deployments")
		var dss appsv1.DaemonSetList
		g.Expect(k8s.List(ctx, &dss, client.InNamespace(operatorNS))).To(Succeed())
		g.Expect(dss.Items).To(BeEmpty(), "DaemonSets (owned by the manager Deployment, removed by the garbage collector)")
	}).WithTimeout(3 * time.Minute).Should(Succeed())

	By("the PrometheusRule and the ServiceMonitor went with the manager Deployment")
	expectMonitoringObjectsGone()

	By("no cluster-scoped object of the operator is left: webhooks, admission policies, RBAC, CRDs")
	Eventually(func(g Gomega) {
		g.Expect(leftovers()).To(BeEmpty())
	}).WithTimeout(3 * time.Minute).Should(Succeed())

	By("a new opted-in pod with a livenessProbe is admitted unchanged and keeps its probe")
	ns := newNamespace("after-cleanup")
	p := enrolledPod(ns, "native")
	Expect(k8s.Create(ctx, p)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
	}).WithTimeout(time.Minute).Should(Succeed())
	Expect(p.Spec.Containers[0].LivenessProbe).NotTo(BeNil(), "livenessProbe kept")
	Expect(p.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContext))
	Expect(p.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))
}

// leftovers names what the operator (or OLM on its behalf) left in the cluster: webhook
// configurations that are OLM-owned by the operator's CSVs, call a service in the operator
// namespace or carry the operator's name; ValidatingAdmissionPolicies and bindings named
// enhanced-liveness-*; ClusterRoles and ClusterRoleBindings named after the operator or its API
// groups or owned by its CSVs; its CRDs.
func leftovers() []string {
	var out []string
	ours := func(kind, name string, labels map[string]string, services ...*admissionregistrationv1.ServiceReference) {
		// OLM's aggregated roles for owned CRDs are named <plural>.<group>-<version>-<verb>.
		hit := strings.HasPrefix(name, namePrefix) || strings.Contains(name, "enhancedliveness.io") ||
			labels["olm.owner.namespace"] == operatorNS ||
			labels["olm.owner"] == csvV1 || labels["olm.owner"] == csvV2 || labels["olm.owner"] == csvRelease
		for _, s := range services {
			hit = hit || (s != nil && s.Namespace == operatorNS)
		}
		if hit {
			out = append(out, kind+" "+name)
		}
	}
	var mwcs admissionregistrationv1.MutatingWebhookConfigurationList
	Expect(k8s.List(ctx, &mwcs)).To(Succeed())
	for _, c := range mwcs.Items {
		var svcs []*admissionregistrationv1.ServiceReference
		for _, w := range c.Webhooks {
			svcs = append(svcs, w.ClientConfig.Service)
		}
		ours("MutatingWebhookConfiguration", c.Name, c.Labels, svcs...)
	}
	var vwcs admissionregistrationv1.ValidatingWebhookConfigurationList
	Expect(k8s.List(ctx, &vwcs)).To(Succeed())
	for _, c := range vwcs.Items {
		var svcs []*admissionregistrationv1.ServiceReference
		for _, w := range c.Webhooks {
			svcs = append(svcs, w.ClientConfig.Service)
		}
		ours("ValidatingWebhookConfiguration", c.Name, c.Labels, svcs...)
	}
	var vaps admissionregistrationv1.ValidatingAdmissionPolicyList
	Expect(k8s.List(ctx, &vaps)).To(Succeed())
	for _, p := range vaps.Items {
		ours("ValidatingAdmissionPolicy", p.Name, p.Labels)
	}
	var vapbs admissionregistrationv1.ValidatingAdmissionPolicyBindingList
	Expect(k8s.List(ctx, &vapbs)).To(Succeed())
	for _, b := range vapbs.Items {
		ours("ValidatingAdmissionPolicyBinding", b.Name, b.Labels)
	}
	var crs rbacv1.ClusterRoleList
	Expect(k8s.List(ctx, &crs)).To(Succeed())
	for _, r := range crs.Items {
		ours("ClusterRole", r.Name, r.Labels)
	}
	var crbs rbacv1.ClusterRoleBindingList
	Expect(k8s.List(ctx, &crbs)).To(Succeed())
	for _, b := range crbs.Items {
		ours("ClusterRoleBinding", b.Name, b.Labels)
	}
	var crds apiextensionsv1.CustomResourceDefinitionList
	Expect(k8s.List(ctx, &crds)).To(Succeed())
	for _, c := range crds.Items {
		if strings.HasSuffix(c.Spec.Group, "enhancedliveness.io") {
			out = append(out, "CustomResourceDefinition "+c.Name)
		}
	}
	return out
}
