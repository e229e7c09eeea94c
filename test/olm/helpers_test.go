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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

var ctx = context.Background()

// newNamespace creates a namespace that is deleted when the spec (or the ordered container,
// from BeforeAll) ends.
func newNamespace(prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "olm-" + prefix + "-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = k8s.Delete(ctx, ns) })
	return ns.Name
}

func getCSV(name string) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	return csv, k8s.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: name}, csv)
}

// expectCSVSucceeded waits for the CSV's phase Succeeded and returns the CSV.
func expectCSVSucceeded(name string) *operatorsv1alpha1.ClusterServiceVersion {
	var csv *operatorsv1alpha1.ClusterServiceVersion
	Eventually(func(g Gomega) {
		var err error
		csv, err = getCSV(name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(csv.Status.Phase).To(Equal(operatorsv1alpha1.CSVPhaseSucceeded),
			"%s: %s", csv.Status.Reason, csv.Status.Message)
	}).WithTimeout(3*time.Minute).Should(Succeed(), "CSV %s Succeeded", name)
	GinkgoWriter.Printf("CSV %s: phase %s (%s)\n", name, csv.Status.Phase, csv.Status.Reason)
	return csv
}

// csvManagerImage is the manager image of the CSV's install strategy.
func csvManagerImage(csv *operatorsv1alpha1.ClusterServiceVersion) string {
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if d.Name == managerName {
			return d.Spec.Template.Spec.Containers[0].Image
		}
	}
	Fail("CSV " + csv.Name + " has no Deployment " + managerName)
	return ""
}

// expectManagerRolledOut waits until every manager replica runs image and is available.
func expectManagerRolledOut(image string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: managerName}, d)).To(Succeed())
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.AvailableReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas), "no old replica left")
	}).WithTimeout(4*time.Minute).Should(Succeed(), "manager Deployment rolled out with %s", image)
	return d
}

// expectDaemonRolledOut waits until the DaemonSet the manager creates runs image on every node
// and returns it with its pods.
func expectDaemonRolledOut(image string) (*appsv1.DaemonSet, []corev1.Pod) {
	ds := &appsv1.DaemonSet{}
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: daemonName}, ds)).To(Succeed())
		g.Expect(ds.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
		g.Expect(ds.Status.ObservedGeneration).To(Equal(ds.Generation))
		g.Expect(ds.Status.DesiredNumberScheduled).To(BeNumerically(">=", 1))
		g.Expect(ds.Status.UpdatedNumberScheduled).To(Equal(ds.Status.DesiredNumberScheduled))
		g.Expect(ds.Status.NumberAvailable).To(Equal(ds.Status.DesiredNumberScheduled))
		var list corev1.PodList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(operatorNS),
			client.MatchingLabels(ds.Spec.Selector.MatchLabels))).To(Succeed())
		pods = nil
		for _, p := range list.Items {
			g.Expect(p.Spec.Containers[0].Image).To(Equal(image), "old daemon pod %s still there", p.Name)
			pods = append(pods, p)
		}
		g.Expect(pods).To(HaveLen(int(ds.Status.DesiredNumberScheduled)))
	}).WithTimeout(4*time.Minute).Should(Succeed(), "daemon DaemonSet rolled out with %s", image)
	return ds, pods
}

// expectDaemonReporting waits until the daemon's Lease was renewed after since (a daemon started
// after since is running its probes).
func expectDaemonReporting(since time.Time) {
	Eventually(func(g Gomega) {
		var nodes corev1.NodeList
		g.Expect(k8s.List(ctx, &nodes)).To(Succeed())
		g.Expect(nodes.Items).NotTo(BeEmpty())
		for _, n := range nodes.Items {
			l := &coordinationv1.Lease{}
			key := client.ObjectKey{Namespace: operatorNS, Name: appsv1alpha1.DaemonLeasePrefix + n.Name}
			g.Expect(k8s.Get(ctx, key, l)).To(Succeed())
			g.Expect(l.Spec.RenewTime).NotTo(BeNil())
			g.Expect(l.Spec.RenewTime.After(since)).To(BeTrue(), "Lease of %s renewed after %s", n.Name, since)
		}
	}).WithTimeout(2*time.Minute).Should(Succeed(), "node daemons reporting")
}

// webhookConfigs are the webhook configurations OLM created for the CSV (OLM labels what it
// creates for a CSV with olm.owner).
func webhookConfigs(csvName string) (
	[]admissionregistrationv1.MutatingWebhookConfiguration, []admissionregistrationv1.ValidatingWebhookConfiguration,
) {
	owned := client.MatchingLabels{"olm.owner": csvName, "olm.owner.namespace": operatorNS}
	var m admissionregistrationv1.MutatingWebhookConfigurationList
	var v admissionregistrationv1.ValidatingWebhookConfigurationList
	Expect(k8s.List(ctx, &m, owned)).To(Succeed())
	Expect(k8s.List(ctx, &v, owned)).To(Succeed())
	return m.Items, v.Items
}

// expectWebhooksServedWithOLMCerts checks that OLM registered the CSV's five webhooks (pod and CRR
// mutating; pod UPDATE, CRR and policy validating) with its CA
// in caBundle, and that every manager pod serves a certificate for OLM's webhook Service that
// this CA verifies.
func expectWebhooksServedWithOLMCerts(csvName string) {
	var caBundle []byte
	Eventually(func(g Gomega) {
		m, v := webhookConfigs(csvName)
		g.Expect(m).To(HaveLen(2), "mutating webhook configurations of %s", csvName)
		g.Expect(v).To(HaveLen(3), "validating webhook configurations of %s", csvName)
		var names []string
		for _, c := range v {
			names = append(names, c.Labels["olm.webhook-description-generate-name"])
		}
		g.Expect(names).To(ContainElement("vpod-v1.kb.io"), "the pod UPDATE webhook that keeps probe keys immutable")
		var cc []admissionregistrationv1.WebhookClientConfig
		for _, c := range m {
			for _, w := range c.Webhooks {
				cc = append(cc, w.ClientConfig)
			}
		}
		for _, c := range v {
			for _, w := range c.Webhooks {
				cc = append(cc, w.ClientConfig)
			}
		}
		g.Expect(cc).To(HaveLen(5))
		for _, c := range cc {
			g.Expect(c.Service).NotTo(BeNil())
			g.Expect(c.Service.Namespace).To(Equal(operatorNS))
			g.Expect(c.Service.Name).To(Equal(managerName + "-service"))
			g.Expect(c.CABundle).NotTo(BeEmpty())
			if caBundle == nil {
				caBundle = c.CABundle
			}
			g.Expect(c.CABundle).To(Equal(caBundle), "one CA for every webhook")
		}
	}).WithTimeout(2 * time.Minute).Should(Succeed())

	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(caBundle)).To(BeTrue(), "caBundle is PEM")
	serverName := fmt.Sprintf("%s-service.%s.svc", managerName, operatorNS)
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(operatorNS),
		client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
	served := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.PodIP == "" {
			continue
		}
		By(fmt.Sprintf("TLS handshake with %s (%s:9443) as %s, trusting only OLM's CA", p.Name, p.Status.PodIP, serverName))
		Eventually(func() error {
			d := &net.Dialer{Timeout: 3 * time.Second}
			conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort(p.Status.PodIP, "9443"),
				&tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12})
			if err != nil {
				return err
			}
			return conn.Close()
		}).WithTimeout(time.Minute).Should(Succeed())
		served++
	}
	Expect(served).To(BeNumerically(">=", 1), "a running manager pod")
}

// enrolledPod is a pod that opts in and has a native HTTP liveness probe.
func enrolledPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Annotations: map[string]string{appsv1alpha1.AnnotationEnabled: appsv1alpha1.TrueValue}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: appImage, ImagePullPolicy: corev1.PullNever,
				LivenessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1, FailureThreshold: 3, TimeoutSeconds: 1,
				},
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](2),
		},
	}
}

// expectEnrolledAtAdmission creates an opted-in pod: the pod webhook moves its liveness probe into
// the probe context annotation.
func expectEnrolledAtAdmission(ns string) {
	p := enrolledPod(ns, "admission-check")
	Expect(k8s.Create(ctx, p)).To(Succeed())
	Expect(p.Spec.Containers[0].LivenessProbe).To(BeNil(), "the pod webhook took the livenessProbe over")
	Expect(p.Annotations).To(HaveKey(appsv1alpha1.AnnotationProbeContext))
	Expect(p.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, appsv1alpha1.TrueValue))
	Expect(k8s.Delete(ctx, p, client.GracePeriodSeconds(0))).To(Succeed())
}
