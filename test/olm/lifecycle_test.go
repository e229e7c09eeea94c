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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/nodescope"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
)

// One operator, one life: each step starts from what the previous one left.
var _ = Describe("the operator's life under OLM", Ordered, func() {
	BeforeAll(func() {
		By("creating the operator namespace, labelled privileged for the daemon (docs/install.md)")
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS,
			Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}}
		Expect(k8s.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = k8s.Delete(ctx, ns) })
		By("installing the Prometheus Operator's PrometheusRule and ServiceMonitor CRDs")
		installMonitoringCRDs()
	})

	It("installs the first version with operator-sdk run bundle: CSV Succeeded, manager and daemon running, "+
		"webhooks on OLM's certificates", installWithRunBundle)
	It("upgrades with operator-sdk run bundle-upgrade to the next version, keeping policies, CRRs and seals, restarting "+
		"no enrolled container and probing every one throughout", upgradeWithRunBundleUpgrade)
	It("holds the daemon's own token to its node: the manager created the node-scope policy on the OLM install",
		expectDaemonNodeScope)
	It("has the manager's PrometheusRule with the hold alert and its ServiceMonitor, which the bundle does not carry",
		expectMonitoringObjects)
	It("passes the e2e smoke subset against the OLM-installed operator", runE2ESmoke)
	It("passes every test of bundle/tests/scorecard/config.yaml with operator-sdk scorecard", runScorecard)
	It("removes everything with operator-sdk cleanup; new pods keep their livenessProbe", removeWithCleanup)
	It("installs the make release catalog through a CatalogSource, an OperatorGroup and a Subscription, probes an "+
		"enrolled pod, and its documented uninstall leaves nothing", installFromReleaseCatalog)
})

func installWithRunBundle() {
	sdk(12*time.Minute, "run", "bundle", bundleV1, "--namespace", operatorNS, "--install-mode", "AllNamespaces",
		"--index-image", indexImage, "--decompression-image", indexImage, "--timeout", "10m")
	csv := expectCSVSucceeded(csvV1)
	image := csvManagerImage(csv)

	By("the manager runs in OLM mode with the certificate OLM mounts")
	d := expectManagerRolledOut(image)
	Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--cert-mode=olm"))
	Expect(slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == managerName+"-service-cert"
	})).To(BeTrue(), "OLM's certificate Secret %s-service-cert mounted", managerName)

	By("the manager created the node daemon DaemonSet with the daemon image of the CSV")
	_, daemons := expectDaemonRolledOut(image)
	expectDaemonReporting(daemons[0].CreationTimestamp.Time)

	By("OLM made the aggregated admin/edit/view roles of every owned CRD (the bundle ships none)")
	for _, crd := range csv.Spec.CustomResourceDefinitions.Owned {
		for _, verb := range []string{"admin", "edit", "view"} {
			name := crd.Name + "-" + crd.Version + "-" + verb
			Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRole{})).To(Succeed(), "ClusterRole %s", name)
		}
	}

	By("the webhooks are registered by OLM and served with OLM's certificate")
	expectWebhooksServedWithOLMCerts(csvV1)
	ns := newNamespace("admission")
	expectEnrolledAtAdmission(ns)
	bad := &policyv1alpha1.EnhancedLivenessPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns},
		Spec: policyv1alpha1.EnhancedLivenessPolicySpec{Blacklist: &policyv1alpha1.Blacklist{
			Workloads: []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1", Kind: "deployment", Name: "web"}}}},
	}
	err := k8s.Create(ctx, bad)
	Expect(err).To(MatchError(ContainSubstring("denied the request")), "the policy webhook answered (failurePolicy Fail)")
	Expect(err).To(MatchError(ContainSubstring("must be a Kind such as Deployment")))

	By("what OLM cannot install: the metrics reader ClusterRole (config/olm, docs/install.md)")
	kustomizeOLMExtras("apply", "--server-side")
	Expect(k8s.Get(ctx, client.ObjectKey{Name: packageName + "-metrics-reader"}, &rbacv1.ClusterRole{})).To(Succeed())
	expectDaemonReporting(time.Now())
}

// expectDaemonNodeScope: the manager (not config/olm) created the daemons' node-scope policy, and a
// token of the daemon's ServiceAccount bound to its pod on one node is refused every write to the
// other node's NodePodProbe, report, ContainerRecreateRequests and Lease.
func expectDaemonNodeScope() {
	Eventually(func(g Gomega) {
		vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Name: packageName + "-daemon-node-scope"}, vap)).To(Succeed())
		g.Expect(vap.OwnerReferences).To(HaveLen(1))
		g.Expect(vap.OwnerReferences[0].Kind).To(Equal("CustomResourceDefinition"))
	}).WithTimeout(time.Minute).Should(Succeed())
	_, daemons := expectDaemonRolledOut(csvManagerImage(expectCSVSucceeded(csvV2)))
	Expect(len(daemons)).To(BeNumerically(">=", 2), "a daemon on each of two nodes (hack/local-cluster: ELO_NODES=2)")
	slices.SortFunc(daemons, func(a, b corev1.Pod) int { return strings.Compare(a.Spec.NodeName, b.Spec.NodeName) })
	setup, err := nodescope.NewSetup(ctx, k8s, daemons[0].Spec.NodeName, daemons[1].Spec.NodeName, appImage)
	DeferCleanup(setup.Cleanup)
	Expect(err).NotTo(HaveOccurred())
	w, err := setup.TryDaemonWrites(ctx, clientset, restConfig, &daemons[0], operatorNS)
	Expect(err).NotTo(HaveOccurred())
	_, _ = fmt.Fprint(GinkgoWriter, w.Summary())
	Expect(w.CheckDaemon()).To(Succeed())
}

// kustomizeOLMExtras runs `kubectl <verb> <args> -k config/olm`.
func kustomizeOLMExtras(verb string, args ...string) {
	root, err := project.Dir()
	Expect(err).NotTo(HaveOccurred())
	args = append(append([]string{verb}, args...), "-k", filepath.Join(root, "config", "olm"))
	run(time.Minute, os.Getenv("KUBECTL"), args...)
}

// runE2ESmoke runs the e2e specs labelled olm-smoke (HTTP liveness restart through a CRR, the
// failure-storm breaker, Shadow mode) against the operator OLM installed.
func runE2ESmoke() {
	root, err := project.Dir()
	Expect(err).NotTo(HaveOccurred())
	out := runIn(root, 25*time.Minute, []string{"E2E_OPERATOR_PREINSTALLED=true", "E2E_OPERATOR_NAMESPACE=" + operatorNS},
		"go", "test", "-tags=e2e", "./test/e2e/", "-count=1", "-timeout", "20m", "-v", "-ginkgo.v",
		"-ginkgo.label-filter=olm-smoke")
	ran := regexp.MustCompile(`Ran (\d+) of \d+ Specs`).FindStringSubmatch(out)
	Expect(ran).NotTo(BeNil(), "the e2e suite reported no spec count")
	Expect(ran[1]).To(Equal("3"), "the smoke subset is scenarios 1, 3 and 4")
}
