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

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/trust"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/gate"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/nodescope"
)

// The trust boundary on a real node: the daemon runs only what a pod's own admitted, sealed probe
// context says.

const (
	signingSecret  = signature.DefaultSecretName
	sealReporter   = "probe-seal-controller"
	execSickAction = `[{"name":"app","livenessProbe":{"exec":{"command":["/app","sick"]},"periodSeconds":1,"failureThreshold":1}}]`
)

// barePod is a pod of the test app bound to the node, with no liveness probe of its own.
func barePod(ns, name, node string, labels, annotations map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{Name: appContainer, Image: appImage, ImagePullPolicy: corev1.PullNever,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
	}
	Expect(k8s.Create(context.Background(), p)).To(Succeed())
	Eventually(func(g Gomega) {
		got := getPod(ns, name)
		g.Expect(got.Status.Phase).To(Equal(corev1.PodRunning))
		g.Expect(got.Status.PodIP).NotTo(BeEmpty())
		*p = *got
	}).WithTimeout(60*time.Second).Should(Succeed(), "pod %s/%s running", ns, name)
	return p
}

// healthy asks the app whether it is healthy (its /healthz, what `/app sick` would break).
func healthy(p *corev1.Pod) bool {
	hc := &http.Client{Timeout: 3 * time.Second}
	resp, err := hc.Get(fmt.Sprintf("http://%s:8080/healthz", p.Status.PodIP))
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	return resp.StatusCode == http.StatusOK
}

// nppMentions reports whether the node's NodePodProbe lists the pod in its spec or its report
// lists it in its results.
func nppMentions(node string, uid types.UID) bool {
	npp := &appsv1alpha1.NodePodProbe{}
	rep := &appsv1alpha1.NodePodProbeReport{}
	if k8s.Get(context.Background(), client.ObjectKey{Name: node}, npp) != nil ||
		k8s.Get(context.Background(), client.ObjectKey{Name: node}, rep) != nil {
		return false
	}
	for _, p := range npp.Spec.PodProbes {
		if p.UID == uid {
			return true
		}
	}
	return rep.Status.Pod(uid) != nil
}

// managerDown scales the manager to 0 and returns what scales it back (and waits for its
// webhook); the spec's end scales it back if the spec did not.
func managerDown() (up func()) {
	GinkgoHelper()
	replicas := ptr.Deref(managerDeployment().Spec.Replicas, 1)
	done := false
	up = func() {
		if done {
			return
		}
		done = true
		By("scaling the manager back and waiting for its webhook")
		scaleManager(replicas)
		Eventually(webhookServing).WithTimeout(60 * time.Second).Should(BeTrue())
	}
	DeferCleanup(up)
	scaleManager(0)
	return up
}

// restConfig is the suite's client configuration.
func restConfig() *rest.Config {
	GinkgoHelper()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	Expect(err).NotTo(HaveOccurred())
	return cfg
}

// signingKeyID is the ID of the key in the signing Secret ("" without one).
func signingKeyID() string {
	s := &corev1.Secret{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: signingSecret}, s); err != nil {
		return ""
	}
	kp, err := signature.KeyPairFromSeed(s.Data[signature.SecretSigningKeyData])
	if err != nil {
		return ""
	}
	return kp.ID
}

func trustedKeyIDs() []string {
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: signature.TrustConfigMapName}, cm); err != nil {
		return nil
	}
	set, _ := signature.DecodeKeySet(cm)
	var out []string
	for id := range set {
		out = append(out, id)
	}
	return out
}

var _ = Describe("the trust boundary", Serial, Ordered, func() {
	It("(a) never probes a pod forged while the webhook was bypassed and the signing key re-created, before or after the manager returns",
		func() {
			ns := newNamespace("forged")
			node := daemonPodList()[0].Spec.NodeName
			up := managerDown()

			By("the signing key is lost, as after a reinstall: the next manager starts with a new key")
			Expect(ignoreNotFound(k8s.Delete(context.Background(), &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: signingSecret}}))).To(Succeed())

			By("a user creates a pod with the enrolled label and an exec probe of their own, no signature")
			forged := barePod(ns, "forged", node, map[string]string{appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue},
				map[string]string{appsv1alpha1.AnnotationEnabled: appsv1alpha1.TrueValue,
					appsv1alpha1.AnnotationProbeContext: `[{"name":"app","livenessProbe":{"exec":{"command":["/app","check"]},"periodSeconds":1,"failureThreshold":1}}]`})
			Expect(forged.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContextSignature), "no webhook answered")
			setSick(*forged, true) // any run of its exec fails, and a failure would restart it
			Consistently(func() bool { return nppMentions(node, forged.UID) }).WithTimeout(10*time.Second).
				Should(BeFalse(), "not probed while the manager is down")

			By("the manager returns (a new key): the pod is reported untrusted and never probed")
			up()
			Eventually(hasEvent(ns, forged.Name, trust.ReasonNotTrusted, sealReporter,
				"it has no "+appsv1alpha1.AnnotationProbeContextSignature+" annotation")).
				WithTimeout(90*time.Second).Should(BeTrue(), "a Warning event says why the pod is not probed")
			Consistently(func(g Gomega) {
				g.Expect(nppMentions(node, forged.UID)).To(BeFalse())
				g.Expect(restartCount(ns, forged.Name)()).To(BeZero())
				g.Expect(hasEvent(ns, forged.Name, "Unhealthy", daemonReporter, "")()).To(BeFalse())
			}).WithTimeout(20 * time.Second).WithPolling(time.Second).Should(Succeed())
			Expect(crrsIn(ns)).To(BeEmpty())
		})

	It("(b) runs nothing a cluster admin adds to a NodePodProbe spec: a pod without probes, a pod named under another's UID",
		func() {
			ns := newNamespace("npp-edit")
			node := daemonPodList()[0].Spec.NodeName
			plain := barePod(ns, "plain", node, nil, nil)
			deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true, node: node})
			web := onlyPod(ns, "web")
			Eventually(func() bool { return nppMentions(node, web.UID) }).WithTimeout(30 * time.Second).Should(BeTrue())
			scrape := daemonScraper(ns, node)
			refusals := func() float64 {
				m, err := testutil.ParseMetrics(strings.NewReader(scrape()))
				Expect(err).NotTo(HaveOccurred())
				return m.Sum("enhanced_liveness_daemon_probe_refusals_total")
			}
			before := refusals()

			By("with the manager down, nothing puts the spec back")
			managerDown()
			// The spec names pods only: what an admin can add is which pods, never a probe.
			named := appsv1alpha1.PodProbe{Name: plain.Name, Namespace: plain.Namespace, UID: plain.UID}
			misnamed := appsv1alpha1.PodProbe{Name: "not-" + web.Name, Namespace: web.Namespace, UID: web.UID}
			Eventually(func() error {
				npp := &appsv1alpha1.NodePodProbe{}
				if err := k8s.Get(context.Background(), client.ObjectKey{Name: node}, npp); err != nil {
					return err
				}
				var entries []appsv1alpha1.PodProbe
				for _, e := range npp.Spec.PodProbes {
					if e.UID != web.UID {
						entries = append(entries, e)
					}
				}
				npp.Spec.PodProbes = append(entries, named, misnamed)
				return k8s.Update(context.Background(), npp)
			}).WithTimeout(30 * time.Second).Should(Succeed())

			By("the daemon refuses both, says so on each pod, and counts them")
			for _, name := range []string{plain.Name, web.Name} {
				Eventually(hasEvent(ns, name, gate.ReasonRejected, daemonReporter, "not run")).
					WithTimeout(30*time.Second).Should(BeTrue(), "a Warning event on %s", name)
			}
			Expect(hasEvent(ns, plain.Name, gate.ReasonRejected, daemonReporter,
				"the pod's probe context was not admitted by the operator's pod webhook")()).To(BeTrue())
			Expect(hasEvent(ns, web.Name, gate.ReasonRejected, daemonReporter,
				fmt.Sprintf("the NodePodProbe entry names pod %s/not-%s, but UID %s is pod %s/%s", ns, web.Name, web.UID, ns, web.Name))()).To(BeTrue())
			Eventually(refusals).WithTimeout(30 * time.Second).Should(BeNumerically(">=", before+2))
			Consistently(func(g Gomega) {
				g.Expect(healthy(plain)).To(BeTrue(), "`/app sick` never ran in the plain pod")
				g.Expect(healthy(&web)).To(BeTrue(), "`/app sick` never ran in the enrolled pod")
				g.Expect(restartCount(ns, plain.Name)()).To(BeZero())
				g.Expect(restartCount(ns, web.Name)()).To(BeZero())
			}).WithTimeout(15 * time.Second).WithPolling(time.Second).Should(Succeed())
		})

	It("(c) rotates the signing key with enrolled pods running: no probing stops, nothing restarts", func() {
		ns := newNamespace("rotation")
		deployApp(ns, app{name: "web", replicas: 2, probe: httpProbe(), enrolled: true,
			annotations: map[string]string{appsv1alpha1.AnnotationRestartDisabled: appsv1alpha1.TrueValue}})
		pods := appPods(ns, "web")
		oldKey := signingKeyID()
		Expect(oldKey).NotTo(BeEmpty())
		Eventually(func(g Gomega) {
			for _, p := range pods {
				g.Expect(signature.SealKeyID(getPod(ns, p.Name))).To(Equal(oldKey))
				g.Expect(nppMentions(p.Spec.NodeName, p.UID)).To(BeTrue())
			}
		}).WithTimeout(30 * time.Second).Should(Succeed())
		type instance struct {
			id       string
			restarts int32
		}
		instances := func() map[string]instance {
			out := map[string]instance{}
			for _, p := range append(appPods(ns, "web"), daemonPodList()...) {
				for _, s := range p.Status.ContainerStatuses {
					out[p.Name+"/"+s.Name] = instance{s.ContainerID, s.RestartCount}
				}
			}
			return out
		}
		before := instances()

		By("deleting the signing Secret: the manager rotates to a new key within its re-read interval")
		Expect(k8s.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: signingSecret}})).To(Succeed())
		deadline := time.Now().Add(3 * time.Minute)
		for {
			// Every running pod keeps its entry (the daemon keeps its worker) while the key changes.
			for _, p := range pods {
				Expect(nppMentions(p.Spec.NodeName, p.UID)).To(BeTrue(), "pod %s left the NodePodProbe during the rotation", p.Name)
			}
			if k := signingKeyID(); k != "" && k != oldKey {
				break
			}
			Expect(time.Now().Before(deadline)).To(BeTrue(), "the manager did not rotate the key")
			time.Sleep(time.Second)
		}
		newKey := signingKeyID()
		Expect(trustedKeyIDs()).To(ContainElements(oldKey, newKey), "the old public key stays while pods are sealed with it")

		By("a pod created once every manager replica re-read the Secret is sealed with the new key and probed")
		// Each replica re-reads the Secret every signature.DefaultRecheckInterval; until then one may
		// still sign and seal with the previous key, which is as trusted.
		for end := time.Now().Add(signature.DefaultRecheckInterval + 5*time.Second); time.Now().Before(end); time.Sleep(time.Second) {
			for _, p := range pods {
				Expect(nppMentions(p.Spec.NodeName, p.UID)).To(BeTrue(), "pod %s left the NodePodProbe after the rotation", p.Name)
			}
		}
		Expect(k8s.Patch(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`)))).To(Succeed())
		var added corev1.Pod
		Eventually(func(g Gomega) {
			all := appPods(ns, "web")
			g.Expect(all).To(HaveLen(3))
			for _, p := range all {
				if p.UID != pods[0].UID && p.UID != pods[1].UID {
					added = p
				}
			}
			g.Expect(signature.SealKeyID(getPod(ns, added.Name))).To(Equal(newKey))
			g.Expect(nppMentions(added.Spec.NodeName, added.UID)).To(BeTrue())
		}).WithTimeout(90 * time.Second).Should(Succeed())

		By("the pods sealed with the old key are still probed: a failure is seen at once")
		setSick(pods[0], true)
		Eventually(probeFailed(pods[0].Spec.NodeName, pods[0].UID)).WithTimeout(30 * time.Second).Should(BeTrue())
		setSick(pods[0], false)

		By("nothing restarted: the app containers and the daemon are the same instances")
		after := instances()
		for k, v := range before {
			Expect(after).To(HaveKeyWithValue(k, v), "container %s", k)
		}
		Expect(hasEvent(ns, pods[0].Name, gate.ReasonRejected, daemonReporter, "")()).To(BeFalse())
	})

	It("refuses node A's daemon, with its own token, every write to node B's NodePodProbe, report, requests and Lease, as NodeRestriction refuses node A's kubelet node B's Node and pods (kustomize install)", func() {
		By("the manager created the policy; the apiserver type-checked it without a warning")
		Eventually(func(g Gomega) {
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
			g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: nodescope.PolicyName}, p)).To(Succeed())
			g.Expect(p.Status.TypeChecking).NotTo(BeNil())
			g.Expect(p.Status.TypeChecking.ExpressionWarnings).To(BeEmpty())
		}).WithTimeout(60 * time.Second).Should(Succeed())
		nodeA, nodeB := twoNodes()
		setup, err := nodescope.NewSetup(context.Background(), k8s, nodeA, nodeB, appImage)
		DeferCleanup(setup.Cleanup)
		Expect(err).NotTo(HaveOccurred())

		By("node A's daemon token: its own node's objects admitted; node B's refused by the node-scope policy or RBAC")
		daemonPod := daemonPodOn(nodeA)
		daemon, err := setup.TryDaemonWrites(context.Background(), cs, restConfig(), &daemonPod, operatorNS)
		Expect(err).NotTo(HaveOccurred())
		_, _ = fmt.Fprint(GinkgoWriter, daemon.Summary())
		Expect(daemon.CheckDaemon()).To(Succeed())

		By("natively: node A's kubelet credentials, its own Node and pod admitted; node B's refused by NodeRestriction")
		kubelet, err := setup.TryKubeletWrites(context.Background(), kubeletConfig(nodeA))
		Expect(err).NotTo(HaveOccurred())
		_, _ = fmt.Fprint(GinkgoWriter, kubelet.Summary())
		Expect(kubelet.CheckKubelet()).To(Succeed())
	})
})
