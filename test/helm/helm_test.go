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

package helm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/nodecondition"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/localregistry"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
)

const (
	// The release and its namespace: not config/default's, so that the chart is shown to install
	// into any namespace.
	releaseName = "enhanced-liveness-operator"
	namespace   = "elo-helm"
	// manifestNS is the namespace of dist/install.yaml (config/default's).
	manifestNS  = "enhanced-liveness-system"
	appNS       = "elo-helm-app"
	managerName = "enhanced-liveness-operator-controller-manager"
	daemonName  = "enhanced-liveness-operator-daemon"
	// Two builds of this tree, as two releases.
	firstVersion  = "0.0.1-e2e.1"
	secondVersion = "0.0.2-e2e.2"
)

// release is one `make release` of this tree.
type release struct {
	version, dist string
	// images are images.txt's references (repository:tag@digest) by repository name.
	images map[string]string
}

func (r release) chart() string {
	return filepath.Join(r.dist, "enhanced-liveness-operator-"+r.version+".tgz")
}

// operatorImage is the operator image's reference the release pins everywhere.
func (r release) operatorImage() string {
	return r.images["enhanced-liveness-operator"]
}

func (r release) manifest() string {
	return filepath.Join(r.dist, "install.yaml")
}

var _ = Describe("The release's install manifest and Helm chart", Ordered, func() {
	var (
		k8s        client.Client
		scrape     scraper
		kubeconfig string
		registry   string
		chartRepo  string
		first      release
		second     release
		manifest   []*unstructured.Unstructured
	)

	BeforeAll(func(ctx SpecContext) {
		kubeconfig = mustEnv("KUBECONFIG")
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		k8s, err = client.New(cfg, client.Options{Scheme: testutil.Scheme()})
		Expect(err).NotTo(HaveOccurred())

		By("serving a registry on an address the local cluster made, telling the nodes' containerd it is plain HTTP")
		host, stop, err := localregistry.Start(registryAddress(cfg.Host), GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stop)
		untrust, err := localregistry.TrustPlainHTTP(mustEnv("E2E_CONTAINERD_HOSTS_DIR"), host)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(untrust)
		registry = host + "/elo"
		chartRepo = "oci://" + registry + "/charts/enhanced-liveness-operator"
		scrape = newScraper(ctx, k8s)

		for _, r := range []*release{&first, &second} {
			*r = release{version: map[*release]string{&first: firstVersion, &second: secondVersion}[r],
				dist: filepath.Join(GinkgoT().TempDir(), "dist")}
			previous := map[*release]string{&first: "none", &second: firstVersion}[r]
			By("make release VERSION=v" + r.version + " REGISTRY=" + registry + " of this tree, for this node's architecture")
			make_(ctx, "release", "VERSION=v"+r.version, "DIST="+r.dist, "REGISTRY="+registry, "PREVIOUS="+previous,
				"RELEASE_PLATFORMS=linux/"+runtime.GOARCH, "RELEASE_TOOL_PLATFORMS=linux/"+runtime.GOARCH,
				"PLUGIN_PLATFORMS=linux/"+runtime.GOARCH)
			r.images = checkDist(r.dist, registry, r.version, previous)
			By("pushing it with the release-push program of dist/, run from dist/ alone")
			pushRelease(ctx, r.dist)
		}
		Expect(localregistry.Catalog(host)).To(ContainElements("elo/enhanced-liveness-operator",
			"elo/enhanced-liveness-operator-bundle", "elo/enhanced-liveness-operator-catalog",
			"elo/charts/enhanced-liveness-operator"))

		By("creating the release's namespace labelled for the privileged Pod Security level, as docs/install.md says")
		kubectl(ctx, "create", "namespace", namespace)
		kubectl(ctx, "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=privileged")
		DeferCleanup(cleanUp, first.manifest(), NodeTimeout(5*time.Minute))
	}, NodeTimeout(20*time.Minute))

	JustAfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpDiagnostics(ctx)
		}
	})

	It("installs the first release's install.yaml with kubectl, has a hung container restarted, and kubectl delete leaves nothing", func(ctx SpecContext) {
		By("kubectl apply --server-side -f install.yaml, as docs/install.md says")
		b, err := os.ReadFile(first.manifest())
		Expect(err).NotTo(HaveOccurred())
		objects := parse(string(b), manifestNS)
		Expect(objects).NotTo(BeEmpty())
		kubectl(ctx, "apply", "--server-side", "-f", first.manifest())
		expectRunning(ctx, k8s, scrape, manifestNS, first.operatorImage(), first.version)

		By("enrolling a workload, whose hung container the operator restarts")
		createApp(ctx, k8s)
		Eventually(func(g Gomega) {
			g.Expect(appPod(ctx, k8s).Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		expectRestart(ctx, k8s, 1)

		By("uninstalling as docs/install.md says: the workload first, then kubectl delete -f install.yaml")
		kubectl(ctx, "delete", "namespace", appNS, "--wait=true", "--timeout=2m")
		kubectl(ctx, "delete", "-f", first.manifest(), "--wait=true", "--timeout=3m")
		By("nothing is left: every object of install.yaml, the DaemonSet and the admission policies the manager made")
		leftovers := append(append([]*unstructured.Unstructured{}, objects...), admissionPolicies()...)
		leftovers = append(leftovers, object("apps/v1", "DaemonSet", manifestNS, daemonName),
			object("v1", "Namespace", "", appNS))
		for _, o := range leftovers {
			Eventually(exists).WithContext(ctx).WithArguments(k8s, o).WithTimeout(2*time.Minute).
				Should(BeFalse(), "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		}
	}, SpecTimeout(10*time.Minute))

	It("installs the first release from its chart in the registry, with the chart's defaults", func(ctx SpecContext) {
		By("helm pull " + chartRepo + " gives the chart package of dist/")
		pulled := GinkgoT().TempDir()
		helm(ctx, "pull", chartRepo, "--version", first.version, "--plain-http", "--destination", pulled)
		Expect(os.ReadFile(filepath.Join(pulled, filepath.Base(first.chart())))).To(Equal(mustRead(first.chart())))
		helm(ctx, "install", releaseName, chartRepo, "--version", first.version, "--plain-http",
			"--namespace", namespace, "--wait", "--timeout", "5m")
		expectRunning(ctx, k8s, scrape, namespace, first.operatorImage(), first.version)

		By("enrolling a workload, whose hung container the operator restarts")
		createApp(ctx, k8s)
		Eventually(func(g Gomega) {
			g.Expect(appPod(ctx, k8s).Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		expectRestart(ctx, k8s, 1)
	}, SpecTimeout(10*time.Minute))

	It("upgrades to the second release's chart in the registry: the manager and the daemons run it, the enrolled pod stays enrolled", func(ctx SpecContext) {
		helm(ctx, "upgrade", releaseName, chartRepo, "--version", second.version, "--plain-http",
			"--namespace", namespace, "--wait", "--timeout", "5m")
		expectRunning(ctx, k8s, scrape, namespace, second.operatorImage(), second.version)
		Expect(appPod(ctx, k8s).Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, "true"))
		expectRestart(ctx, k8s, 2)
	}, SpecTimeout(10*time.Minute))

	It("uninstalls: Helm keeps the CRDs, deleting them and the namespace leaves nothing", func(ctx SpecContext) {
		By("the release's objects, as Helm recorded them")
		manifest = parse(helm(ctx, "get", "manifest", releaseName, "--namespace", namespace), namespace)
		Expect(manifest).NotTo(BeEmpty())
		kubectl(ctx, "delete", "namespace", appNS, "--wait=true", "--timeout=2m")

		hooks := parse(helm(ctx, "get", "hooks", releaseName, "--namespace", namespace), namespace)
		Expect(hooks).To(HaveLen(6), "the pre-delete hook: a Job, its ServiceAccount and RBAC")
		node := plantNodeCondition(ctx, k8s)

		helm(ctx, "uninstall", releaseName, "--namespace", namespace, "--wait", "--timeout", "3m")
		By("the pre-delete hook ran manager stop: the condition nobody judges now is False, and the hook's objects are gone")
		cond := nodeCondition(ctx, k8s, node)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Status).To(Equal(corev1.ConditionFalse))
		Expect(cond.Reason).To(Equal(nodecondition.ReasonNotJudged))
		Expect(cond.Message).To(Equal(nodecondition.Stopped().Message))
		for _, o := range hooks {
			Eventually(exists).WithContext(ctx).WithArguments(k8s, o).WithTimeout(time.Minute).
				Should(BeFalse(), "hook %s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		}
		By("every object of the release is gone but the CRDs (helm.sh/resource-policy: keep), and the DaemonSet the manager made with them")
		crds := 0
		for _, o := range manifest {
			if o.GetKind() == "CustomResourceDefinition" {
				crds++
				Expect(exists(ctx, k8s, o)).To(BeTrue(), "CRD %s is kept", o.GetName())
				continue
			}
			Eventually(exists).WithContext(ctx).WithArguments(k8s, o).WithTimeout(2*time.Minute).
				Should(BeFalse(), "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		}
		Expect(crds).To(Equal(5))
		Eventually(exists).WithContext(ctx).WithArguments(k8s, object("apps/v1", "DaemonSet", namespace, daemonName)).
			WithTimeout(2 * time.Minute).Should(BeFalse())
		By("the admission policies the manager made stay with the CRDs that own them")
		for _, o := range admissionPolicies() {
			Expect(exists(ctx, k8s, o)).To(BeTrue(), "%s %s", o.GetKind(), o.GetName())
		}

		By("deleting the kept CRDs and the namespace, as docs/install.md says")
		kubectl(ctx, "delete", "crd", "-l", "app.kubernetes.io/managed-by=Helm,app.kubernetes.io/instance="+releaseName,
			"--wait=true", "--timeout=2m")
		kubectl(ctx, "delete", "namespace", namespace, "--wait=true", "--timeout=2m")
		leftovers := append(append([]*unstructured.Unstructured{}, manifest...), admissionPolicies()...)
		leftovers = append(leftovers, object("v1", "Namespace", "", namespace), object("v1", "Namespace", "", appNS))
		for _, o := range leftovers {
			Eventually(exists).WithContext(ctx).WithArguments(k8s, o).WithTimeout(2*time.Minute).
				Should(BeFalse(), "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		}
	}, SpecTimeout(10*time.Minute))
})

// plantNodeCondition sets a node's EnhancedLivenessNodeStorm condition True, as a manager that
// crashed would have left it, and returns the node. It waits until the running leader has judged
// the node's condition anew (a NotJudged condition an earlier manager left is judged again, and
// that judgement would overwrite the one planted): from then on the leader leaves alone a
// condition it did not set.
func plantNodeCondition(ctx SpecContext, k8s client.Client) string {
	GinkgoHelper()
	nodes := &corev1.NodeList{}
	Expect(k8s.List(ctx, nodes)).To(Succeed())
	Expect(nodes.Items).NotTo(BeEmpty())
	node := nodes.Items[0].Name
	By("setting the EnhancedLivenessNodeStorm condition of node " + node + " True, as a crashed manager would have left it")
	Eventually(func() string {
		if c := nodeCondition(ctx, k8s, node); c != nil {
			return c.Reason
		}
		return ""
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).ShouldNot(Equal(nodecondition.ReasonNotJudged))
	now := metav1.Now()
	cond := corev1.NodeCondition{Type: nodecondition.Type, Status: corev1.ConditionTrue, Reason: nodecondition.ReasonHeld,
		Message: "planted by the Helm test", LastHeartbeatTime: now, LastTransitionTime: now}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.Status().Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
		client.RawPatch(types.StrategicMergePatchType, patch))).To(Succeed())
	Expect(nodeCondition(ctx, k8s, node).Status).To(Equal(corev1.ConditionTrue))
	return node
}

// nodeCondition is the node's EnhancedLivenessNodeStorm condition, or nil.
func nodeCondition(ctx context.Context, k8s client.Client, node string) *corev1.NodeCondition {
	GinkgoHelper()
	n := &corev1.Node{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == nodecondition.Type {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// expectRunning waits for the manager in namespace ns and the daemon DaemonSet the manager creates
// to run version, from its image (the release's reference, pinned by digest), and for each to say
// so: the build-info metric of every manager replica and of the node's daemon, and the daemon's
// User-Agent, which the API server records as the field manager of the daemon's Lease.
func expectRunning(ctx SpecContext, k8s client.Client, scrape scraper, ns, image, version string) {
	GinkgoHelper()
	By("the manager and the daemons run " + image)
	Eventually(func(g Gomega) {
		var d appsv1.Deployment
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: managerName}, &d)).To(Succeed())
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.AvailableReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas), "old replicas gone")
		var ds appsv1.DaemonSet
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: daemonName}, &ds)).To(Succeed())
		g.Expect(ds.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
		g.Expect(ds.Status.ObservedGeneration).To(Equal(ds.Generation))
		g.Expect(ds.Status.UpdatedNumberScheduled).To(Equal(ds.Status.DesiredNumberScheduled))
		g.Expect(ds.Status.NumberAvailable).To(Equal(ds.Status.DesiredNumberScheduled))
		g.Expect(ds.Status.DesiredNumberScheduled).To(BeNumerically(">", 0))
	}).WithContext(ctx).WithTimeout(5 * time.Minute).Should(Succeed())

	By("every manager replica and the daemon report version " + version + " in enhanced_liveness_build_info")
	want := fmt.Sprintf(`version="%s"`, version)
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns),
			client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		n := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || p.Status.PodIP == "" {
				continue
			}
			n++
			g.Expect(buildInfo(g, scrape(g, fmt.Sprintf("https://%s:8443/metrics", p.Status.PodIP)))).To(ContainSubstring(want), p.Name)
		}
		g.Expect(n).To(BeNumerically(">", 0))
		g.Expect(buildInfo(g, scrape(g, "https://127.0.0.1:10290/metrics"))).To(ContainSubstring(want), "daemon")
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())

	By("the daemon's Lease is written by enhanced-liveness-daemon (its User-Agent)")
	var nodes corev1.NodeList
	Expect(k8s.List(ctx, &nodes)).To(Succeed())
	for _, n := range nodes.Items {
		var lease coordinationv1.Lease
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "enhanced-liveness-daemon-" + n.Name}, &lease)).To(Succeed())
		var managers []string
		for _, m := range lease.ManagedFields {
			managers = append(managers, m.Manager)
		}
		Expect(managers).To(ContainElement("enhanced-liveness-daemon"), "field managers of the Lease of node %s", n.Name)
	}
}

// buildInfo is the enhanced_liveness_build_info line of a metrics text.
func buildInfo(g Gomega, metrics string) string {
	for l := range strings.SplitSeq(metrics, "\n") {
		if strings.HasPrefix(l, "enhanced_liveness_build_info{") {
			return l
		}
	}
	g.Expect(metrics).To(ContainSubstring("enhanced_liveness_build_info{"))
	return ""
}

// createApp deploys one replica of the e2e app, enrolled by the annotation, with a 1 s HTTP
// liveness probe.
func createApp(ctx context.Context, k8s client.Client) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}})).To(Succeed())
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: appNS},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels,
					Annotations: map[string]string{appsv1alpha1.AnnotationEnabled: appsv1alpha1.TrueValue}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](2),
					Containers: []corev1.Container{{
						Name: "app", Image: envOr("E2E_APP_IMAGE", "localhost/e2e-app:e2e"), ImagePullPolicy: corev1.PullNever,
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
						LivenessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
							PeriodSeconds: 1, FailureThreshold: 3,
						},
					}},
				},
			},
		},
	}
	Expect(k8s.Create(ctx, d)).To(Succeed())
}

func appPod(ctx context.Context, k8s client.Client) *corev1.Pod {
	GinkgoHelper()
	var pods corev1.PodList
	Eventually(func(g Gomega) {
		g.Expect(k8s.List(ctx, &pods, client.InNamespace(appNS), client.MatchingLabels{"app": "web"})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		g.Expect(pods.Items[0].Status.PodIP).NotTo(BeEmpty())
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	return &pods.Items[0]
}

// expectRestart makes the app's container hang (its /healthz fails until it restarts) and waits
// for the operator to have restarted it the n-th time.
func expectRestart(ctx SpecContext, k8s client.Client, n int32) {
	GinkgoHelper()
	By(fmt.Sprintf("the operator restarts the hung container (restart %d)", n))
	pod := appPod(ctx, k8s)
	Eventually(func(g Gomega) {
		p := appPod(ctx, k8s)
		g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
		g.Expect(p.Status.ContainerStatuses[0].Ready).To(BeTrue())
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	postSick(pod.Status.PodIP)
	Eventually(func(g Gomega) {
		p := appPod(ctx, k8s)
		g.Expect(p.Status.ContainerStatuses[0].RestartCount).To(BeNumerically(">=", n))
	}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
	var crrs appsv1alpha1.ContainerRecreateRequestList
	Expect(k8s.List(ctx, &crrs, client.InNamespace(appNS))).To(Succeed())
	Expect(crrs.Items).NotTo(BeEmpty(), "the restart was the operator's: a ContainerRecreateRequest exists")
}

func admissionPolicies() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, name := range []string{
		"enhanced-liveness-operator-pod-probe-immutable", "enhanced-liveness-operator-daemon-node-scope",
		"enhanced-liveness-operator-restart-holds",
	} {
		out = append(out,
			object(admissionregistrationv1.SchemeGroupVersion.String(), "ValidatingAdmissionPolicy", "", name),
			object(admissionregistrationv1.SchemeGroupVersion.String(), "ValidatingAdmissionPolicyBinding", "", name))
	}
	return out
}

func object(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func exists(ctx context.Context, k8s client.Client, o *unstructured.Unstructured) bool {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.GroupVersionKind())
	err := k8s.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetName()}, u)
	if apierrors.IsNotFound(err) {
		return false
	}
	Expect(err).NotTo(HaveOccurred())
	return true
}

// parse reads a YAML stream (helm get manifest, install.yaml) into objects; a namespaced object
// without a namespace is in ns.
func parse(yamlText, ns string) []*unstructured.Unstructured {
	GinkgoHelper()
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(yamlText), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			Expect(err.Error()).To(Equal("EOF"))
			return out
		}
		if len(u.Object) > 0 {
			if u.GetNamespace() == "" && namespaced(u.GroupVersionKind()) {
				u.SetNamespace(ns)
			}
			out = append(out, u)
		}
	}
}

// checkDist checks what a release for registry writes beside its images and returns images.txt's
// references by repository name: every reference to an image the release built is
// <registry>/<repository>:v<version>@sha256:... (install.yaml, the chart's values, the catalog);
// crds.yaml holds exactly the CRDs of install.yaml; the catalog is in the candidate channel (a
// pre-release) with the upgrade edge from previous; README.md names every file of the release.
func checkDist(dist, registry, version, previous string) map[string]string {
	GinkgoHelper()
	read := func(name string) string { return string(mustRead(filepath.Join(dist, name))) }
	images := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(read("images.txt")), "\n") {
		fields := strings.Fields(line)
		Expect(fields).To(HaveLen(2), "images.txt: %q", line)
		repo, _, _ := strings.Cut(strings.TrimPrefix(fields[0], registry+"/"), ":")
		Expect(fields[0]).To(MatchRegexp(`^%s/%s:v%s@sha256:[0-9a-f]{64}$`, regexp.QuoteMeta(registry), repo, regexp.QuoteMeta(version)))
		Expect(fields[1]).To(Equal(repo + "-v" + version + ".oci.tar"))
		images[repo] = fields[0]
	}
	Expect(images).To(HaveKey("enhanced-liveness-operator"))
	Expect(images).To(HaveKey("enhanced-liveness-operator-bundle"))
	Expect(images).To(HaveKey("enhanced-liveness-operator-catalog"))
	op := images["enhanced-liveness-operator"]

	var crds, installCRDs []string
	for _, u := range parse(read("crds.yaml"), "") {
		Expect(u.GetKind()).To(Equal("CustomResourceDefinition"), "crds.yaml holds %s %s", u.GetKind(), u.GetName())
		crds = append(crds, u.GetName())
	}
	for _, u := range parse(read("install.yaml"), "") {
		if u.GetKind() == "CustomResourceDefinition" {
			installCRDs = append(installCRDs, u.GetName())
		}
	}
	Expect(crds).To(ConsistOf(installCRDs))
	By("every image reference names " + registry + ", pinned by digest")
	Expect(regexp.MustCompile(`image: (\S+)`).FindAllStringSubmatch(read("install.yaml"), -1)).
		To(HaveEach(HaveExactElements(Not(BeEmpty()), Equal(op))), "install.yaml")
	catalog := read("catalog.yaml")
	for _, m := range regexp.MustCompile(`image: (\S+)`).FindAllStringSubmatch(catalog, -1) {
		Expect(m[1]).To(BeElementOf(op, images["enhanced-liveness-operator-bundle"]), "catalog.yaml")
	}
	Expect(catalog).To(ContainSubstring("image: " + images["enhanced-liveness-operator-bundle"]))
	Expect(catalog).To(ContainSubstring("image: "+op), "the CSV's relatedImages (the daemon)")
	Expect(catalog).To(ContainSubstring("name: candidate\n"))
	Expect(catalog).NotTo(ContainSubstring("name: stable\n"), "a pre-release is not in stable")
	if previous != "none" {
		Expect(catalog).To(ContainSubstring("replaces: enhanced-liveness-operator.v" + previous + "\n"))
		Expect(catalog).To(ContainSubstring(fmt.Sprintf(`skipRange: ">=%s <%s"`, previous, version)))
	} else {
		Expect(catalog).NotTo(ContainSubstring("replaces:"))
	}

	readme := read("README.md")
	var sboms []string
	for line := range strings.SplitSeq(strings.TrimSpace(read("SHA256SUMS")), "\n") {
		fields := strings.Fields(line)
		Expect(fields).To(HaveLen(2))
		if fields[1] != "README.md" {
			Expect(readme).To(ContainSubstring("`"+fields[1]+"`"), "README.md names %s", fields[1])
		}
		if strings.HasSuffix(fields[1], ".cdx.json") {
			sboms = append(sboms, fields[1])
			var doc struct {
				Components []struct{ Name, Version string } `json:"components"`
			}
			Expect(json.Unmarshal([]byte(read(fields[1])), &doc)).To(Succeed(), fields[1])
			Expect(doc.Components).To(ContainElement(And(HaveField("Name", "sigs.k8s.io/controller-runtime"),
				HaveField("Version", moduleVersion("sigs.k8s.io/controller-runtime")))), fields[1])
		}
	}
	// The suite's releases are of the node's platform only.
	Expect(sboms).To(ConsistOf(
		HaveSuffix("-manager-linux-"+runtime.GOARCH+".cdx.json"), HaveSuffix("-daemon-linux-"+runtime.GOARCH+".cdx.json")))
	Expect(read("SHA256SUMS")).To(ContainSubstring("  release-push-linux-" + runtime.GOARCH + "\n"))
	checkPlugin(dist, version)
	return images
}

// checkPlugin runs the kubectl plugin of this platform as krew would install it: the archive the
// krew manifest names, with the SHA-256 it gives.
func checkPlugin(dist, version string) {
	GinkgoHelper()
	var m struct {
		Spec struct {
			Version   string `json:"version"`
			Platforms []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				URI, SHA256, Bin string
			} `json:"platforms"`
		} `json:"spec"`
	}
	Expect(yaml.Unmarshal(mustRead(filepath.Join(dist, "enhancedliveness.yaml")), &m)).To(Succeed())
	Expect(m.Spec.Version).To(Equal("v" + version))
	Expect(m.Spec.Platforms).To(HaveLen(1), "the suite's releases are of the node's platform only")
	for _, p := range m.Spec.Platforms {
		if p.Selector.MatchLabels["os"] != "linux" || p.Selector.MatchLabels["arch"] != runtime.GOARCH {
			continue
		}
		archive := filepath.Join(dist, filepath.Base(p.URI))
		sum := sha256.Sum256(mustRead(archive))
		Expect(hex.EncodeToString(sum[:])).To(Equal(p.SHA256), "the krew manifest's sha256 of %s", archive)
		dir := GinkgoT().TempDir()
		out, err := exec.Command("tar", "-xzf", archive, "-C", dir).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		out, err = exec.Command(filepath.Join(dir, p.Bin), "--version").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(ContainSubstring("version " + version))
		return
	}
	Fail("the krew manifest has no linux/" + runtime.GOARCH + " platform")
}

// pushRelease runs the release-push program a release ships, in the release directory, with
// nothing of this checkout: no Go, no make, a HOME without credentials.
func pushRelease(ctx context.Context, dist string) {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, "./release-push-linux-"+runtime.GOARCH, "--insecure")
	cmd.Dir = dist
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + GinkgoT().TempDir()}
	out, err := cmd.CombinedOutput()
	_, _ = fmt.Fprintf(GinkgoWriter, "%s", out)
	Expect(err).NotTo(HaveOccurred(), "release-push: %s", out)
	Expect(strings.Count(string(out), "release-push: pushed ")).To(Equal(4), "three images and the chart")
}

func mustRead(path string) []byte {
	GinkgoHelper()
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return b
}

// moduleVersion is go.mod's version of module m. It asks the go command: a test binary's build
// information lists no dependencies.
func moduleVersion(m string) string {
	GinkgoHelper()
	dir, err := project.Dir()
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", m)
	cmd.Dir = dir
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "go list -m %s", m)
	return strings.TrimSpace(string(out))
}

// namespaced tells the kinds of the chart and install.yaml that live in a namespace.
func namespaced(gvk schema.GroupVersionKind) bool {
	switch gvk.Kind {
	case "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration",
		"ValidatingWebhookConfiguration", "Namespace":
		return false
	}
	return true
}

// dumpDiagnostics prints what a person would look at first when a spec failed.
func dumpDiagnostics(ctx context.Context) {
	for _, args := range [][]string{
		{"get", "pods,deploy,ds,lease", "-n", namespace, "-o", "wide"},
		{"logs", "-n", namespace, "-l", "control-plane=controller-manager", "--tail=60", "--prefix"},
		{"get", "pods,deploy,ds,lease", "-n", manifestNS, "-o", "wide"},
		{"logs", "-n", manifestNS, "-l", "control-plane=controller-manager", "--tail=60", "--prefix"},
		{"get", "pods,crr", "-n", appNS, "-o", "wide"},
		{"get", "events", "-n", appNS, "--sort-by=.lastTimestamp"},
	} {
		out, err := project.Run(exec.CommandContext(ctx, mustEnv("KUBECTL"), args...))
		_, _ = fmt.Fprintf(GinkgoWriter, "\n===== kubectl %s\n%s\n", strings.Join(args, " "), out)
		if err != nil {
			_, _ = fmt.Fprintln(GinkgoWriter, err)
		}
	}
}

// cleanUp removes whatever a failed spec left (after a passing run there is nothing): the
// objects of install.yaml, the Helm release, its CRDs, both namespaces.
func cleanUp(ctx SpecContext, installYAML string) {
	for _, args := range [][]string{
		{mustEnv("KUBECTL"), "delete", "-f", installYAML, "--ignore-not-found", "--wait=true", "--timeout=3m"},
		{mustEnv("HELM"), "uninstall", releaseName, "--namespace", namespace, "--ignore-not-found", "--wait", "--timeout", "3m"},
		{mustEnv("KUBECTL"), "delete", "crd", "-l", "app.kubernetes.io/instance=" + releaseName, "--ignore-not-found", "--wait=true"},
		{mustEnv("KUBECTL"), "delete", "namespace", namespace, appNS, "--ignore-not-found", "--wait=true", "--timeout=2m"},
	} {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+mustEnv("KUBECONFIG"))
		if out, err := project.Run(cmd); err != nil {
			_, _ = fmt.Fprintf(GinkgoWriter, "cleanup: %v\n%s", err, out)
		}
	}
}

func make_(ctx context.Context, args ...string) {
	GinkgoHelper()
	out, err := project.Run(exec.CommandContext(ctx, "make", args...))
	_, _ = fmt.Fprint(GinkgoWriter, out)
	Expect(err).NotTo(HaveOccurred())
}

func helm(ctx context.Context, args ...string) string {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, mustEnv("HELM"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+mustEnv("KUBECONFIG"))
	out, err := project.Run(cmd)
	Expect(err).NotTo(HaveOccurred())
	return out
}

func kubectl(ctx context.Context, args ...string) string {
	GinkgoHelper()
	out, err := project.Run(exec.CommandContext(ctx, mustEnv("KUBECTL"), args...))
	Expect(err).NotTo(HaveOccurred())
	return out
}
