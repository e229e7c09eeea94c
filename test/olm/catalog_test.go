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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// The release test-olm made with `make release` and pushed with the release-push of its dist/:
// its catalog image, the operator image it pins, and the channel of its version
// (hack/olm/test-olm.sh).
var (
	catalogImage   = mustEnv("OLM_CATALOG_IMAGE")
	releaseImage   = mustEnv("OLM_RELEASE_IMAGE")
	csvRelease     = packageName + ".v" + mustEnv("OLM_CATALOG_RELEASE")
	catalogChannel = mustEnv("OLM_CATALOG_CHANNEL")
)

// subscribeYAML is what docs/install.md ("With OLM: a release's catalog") has an OLM user apply,
// with the catalog image and the channel of the release.
const subscribeYAML = `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: enhanced-liveness-operator
  namespace: enhanced-liveness-system
spec:
  sourceType: grpc
  image: %s
  displayName: Enhanced liveness operator
  grpcPodConfig:
    securityContextConfig: restricted
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: enhanced-liveness-operator
  namespace: enhanced-liveness-system
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: enhanced-liveness-operator
  namespace: enhanced-liveness-system
spec:
  name: enhanced-liveness-operator
  channel: %s
  source: enhanced-liveness-operator
  sourceNamespace: enhanced-liveness-system
`

// installFromReleaseCatalog installs the release from its catalog as docs/install.md tells an OLM
// user (a CatalogSource, an OperatorGroup and a Subscription in the operator namespace), checks
// that the CSV succeeds with the release's image and that an enrolled pod is probed by its node's
// daemon (its NodePodProbeReport counts it; made to hang, it is restarted through a CRR),
// uninstalls as documented and checks that nothing is left.
func installFromReleaseCatalog() {
	kubectlBin := os.Getenv("KUBECTL")
	file := filepath.Join(GinkgoT().TempDir(), "subscribe.yaml")
	Expect(os.WriteFile(file, fmt.Appendf(nil, subscribeYAML, catalogImage, catalogChannel), 0o644)).To(Succeed())
	run(time.Minute, kubectlBin, "apply", "-f", file)
	resolveCatalogServiceForOLM()

	By("OLM resolves the Subscription from the catalog and installs " + csvRelease)
	Eventually(func(g Gomega) {
		sub := &operatorsv1alpha1.Subscription{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: packageName}, sub)).To(Succeed())
		g.Expect(sub.Status.InstalledCSV).To(Equal(csvRelease), "Subscription state %q", sub.Status.State)
	}).WithTimeout(6 * time.Minute).Should(Succeed())
	csv := expectCSVSucceeded(csvRelease)
	Expect(csvManagerImage(csv)).To(Equal(releaseImage), "the CSV runs the image make release-push pushed")
	expectManagerRolledOut(releaseImage)
	_, daemons := expectDaemonRolledOut(releaseImage)
	expectDaemonReporting(daemons[0].CreationTimestamp.Time)
	expectWebhooksServedWithOLMCerts(csvRelease)

	By("an enrolled pod is probed by its node's daemon (the NodePodProbeReport counts it) and, made to hang, restarted through a CRR")
	ns := newNamespace("catalog")
	p := enrolledPod(ns, "probed")
	Expect(k8s.Create(ctx, p)).To(Succeed())
	Expect(p.Spec.Containers[0].LivenessProbe).To(BeNil(), "the pod webhook took the livenessProbe over")
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		g.Expect(p.Status.ContainerStatuses).To(ContainElement(HaveField("Ready", true)))
		npp := &appsv1alpha1.NodePodProbe{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, npp)).To(Succeed())
		g.Expect(npp.Spec.PodProbes).To(ContainElement(HaveField("UID", p.UID)), "pod %s in NodePodProbe %s", p.Name, npp.Name)
		// A passing probe is counted, not listed: the report of the spec that holds the pod
		// counts a probed pod and lists no failure of it.
		rep := &appsv1alpha1.NodePodProbeReport{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, rep)).To(Succeed())
		g.Expect(rep.Status.ProbedGeneration).To(BeNumerically(">=", npp.Generation))
		g.Expect(rep.Status.ProbedPods).To(BeNumerically(">=", 1))
		if ps := rep.Status.Pod(p.UID); ps != nil {
			g.Expect(ps.FailedProbes()).To(BeZero(), "pod %s reported failing: %+v", p.Name, ps.ProbeStates)
		}
	}).WithTimeout(2 * time.Minute).Should(Succeed())
	Expect(setSick(*p)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		g.Expect(p.Status.ContainerStatuses).To(ContainElement(HaveField("RestartCount", BeNumerically(">=", 1))))
	}).WithTimeout(2*time.Minute).Should(Succeed(), "the hung container restarted")
	var crrs appsv1alpha1.ContainerRecreateRequestList
	Expect(k8s.List(ctx, &crrs, client.InNamespace(ns))).To(Succeed())
	Expect(crrs.Items).NotTo(BeEmpty(), "the restart was the operator's: a ContainerRecreateRequest exists")
	Expect(k8s.Delete(ctx, p)).To(Succeed())

	uninstallReleaseAsDocumented(kubectlBin)
}

// resolveCatalogServiceForOLM makes up for the local cluster's missing cluster DNS: OLM reaches a
// CatalogSource's registry pod by its Service's DNS name (<name>.<namespace>.svc), which only a
// cluster DNS resolves. Once OLM made the Service, the catalog-operator (hack/olm/olm.yaml) gets
// the name with the Service's cluster IP in its /etc/hosts (hostAliases), and rolls.
func resolveCatalogServiceForOLM() {
	svc := &corev1.Service{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: packageName}, svc)).To(Succeed())
		g.Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
	}).WithTimeout(2*time.Minute).Should(Succeed(), "the Service OLM makes for the CatalogSource")
	name := fmt.Sprintf("%s.%s.svc", svc.Name, svc.Namespace)
	By(fmt.Sprintf("telling OLM's catalog-operator that %s is %s (no cluster DNS on the local nodes)", name, svc.Spec.ClusterIP))
	d := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: "olm", Name: "catalog-operator"}
	Expect(k8s.Get(ctx, key, d)).To(Succeed())
	d.Spec.Template.Spec.HostAliases = append(d.Spec.Template.Spec.HostAliases,
		corev1.HostAlias{IP: svc.Spec.ClusterIP, Hostnames: []string{name}})
	Expect(k8s.Update(ctx, d)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, key, d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.AvailableReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas))
	}).WithTimeout(2*time.Minute).Should(Succeed(), "catalog-operator rolled out")
}

// uninstallReleaseAsDocumented runs the uninstall of docs/install.md for a Subscription: the
// Subscription, the CSV, the CRDs the CSV owned, the namespace; then nothing of the operator is
// left.
func uninstallReleaseAsDocumented(kubectlBin string) {
	By("uninstalling as docs/install.md says")
	crds := strings.Fields(run(time.Minute, kubectlBin, "-n", operatorNS, "get", "csv", csvRelease,
		"-o", "jsonpath={.spec.customresourcedefinitions.owned[*].name}"))
	Expect(crds).To(HaveLen(5), "the CSV owns the operator's CRDs")
	run(time.Minute, kubectlBin, "-n", operatorNS, "delete", "subscription", packageName)
	run(3*time.Minute, kubectlBin, "-n", operatorNS, "delete", "csv", csvRelease)
	run(3*time.Minute, kubectlBin, append([]string{"delete", "crd"}, crds...)...)
	run(3*time.Minute, kubectlBin, "delete", "namespace", operatorNS)

	By("nothing is left: the namespace (CatalogSource, OperatorGroup, Deployment, DaemonSet, Secrets, Leases), " +
		"webhooks, admission policies, RBAC, CRDs")
	Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Name: operatorNS}, &corev1.Namespace{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s: %v", operatorNS, err)
		g.Expect(leftovers()).To(BeEmpty())
		var dss appsv1.DaemonSetList
		g.Expect(k8s.List(ctx, &dss, client.MatchingLabels{"app.kubernetes.io/name": "enhanced-liveness-daemon"})).To(Succeed())
		g.Expect(dss.Items).To(BeEmpty(), "daemon DaemonSets")
	}).WithTimeout(3 * time.Minute).Should(Succeed())
}
