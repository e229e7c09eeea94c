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

package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// These specs run the real rotator and the manager's certificate writer against a
// kube-apiserver. Nothing else fills the certificate directory: the files the webhook server
// serves are the ones the writer copied from the Secret.

var (
	suite     *testutil.Suite
	ctx       context.Context
	cfg       *rest.Config
	k8sClient client.Client
)

func TestRotation(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Webhook certificate suite")
}

var _ = BeforeSuite(func() {
	// Generous: this suite shares two CPUs with the rest of CI.
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	suite = testutil.StartSuite(testutil.SuiteOptions{})
	ctx, cfg, k8sClient = suite.Ctx, suite.Config, suite.Client
})

var _ = AfterSuite(func() { suite.Stop() })

const (
	certNS      = "elo-certs"
	secretName  = "webhook-server-cert"
	serviceName = "webhook-service"
	mutating    = "elo-test-mutating"
	validating  = "elo-test-validating"
)

// webhookConfigs are two configurations as the manifests install them: no caBundle yet.
func webhookConfigs() []client.Object {
	cc := admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{
		Namespace: certNS, Name: serviceName, Path: new("/mutate"), Port: new(int32(443)),
	}}
	rules := []admissionv1.RuleWithOperations{{
		Operations: []admissionv1.OperationType{admissionv1.Create},
		Rule: admissionv1.Rule{APIGroups: []string{"example.org"}, APIVersions: []string{"v1"},
			Resources: []string{"widgets"}},
	}}
	none := admissionv1.SideEffectClassNone
	return []client.Object{
		&admissionv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: mutating},
			Webhooks: []admissionv1.MutatingWebhook{{Name: "m.example.org", ClientConfig: cc, Rules: rules,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}},
		},
		&admissionv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: validating},
			Webhooks: []admissionv1.ValidatingWebhook{{Name: "v.example.org", ClientConfig: cc, Rules: rules,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}},
		},
	}
}

func caBundles() (mutatingCA, validatingCA []byte, err error) {
	m := &admissionv1.MutatingWebhookConfiguration{}
	if err = k8sClient.Get(ctx, types.NamespacedName{Name: mutating}, m); err != nil {
		return nil, nil, err
	}
	v := &admissionv1.ValidatingWebhookConfiguration{}
	if err = k8sClient.Get(ctx, types.NamespacedName{Name: validating}, v); err != nil {
		return nil, nil, err
	}
	return m.Webhooks[0].ClientConfig.CABundle, v.Webhooks[0].ClientConfig.CABundle, nil
}

func getSecret() (*corev1.Secret, error) {
	s := &corev1.Secret{}
	return s, k8sClient.Get(ctx, types.NamespacedName{Namespace: certNS, Name: secretName}, s)
}

var managers int

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func leafOf(pemBytes []byte) *x509.Certificate {
	b, _ := pem.Decode(pemBytes)
	Expect(b).NotTo(BeNil())
	c, err := x509.ParseCertificate(b.Bytes)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// servedLeaf returns the DER of the certificate the webhook server on port presents.
func servedLeaf(port int) ([]byte, error) {
	// Not verified here: the caller compares the certificate with the expected one.
	conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0].Raw, nil
}

func readFile(dir, name string) []byte {
	b, _ := os.ReadFile(filepath.Join(dir, name))
	return b
}

// startWithCerts starts a manager whose (gated) webhook server uses self-managed certificates
// in dir.
func startWithCerts(o Options, port int) (ready chan struct{}, mgrStop func(), checker func() error, dir string) {
	ready = make(chan struct{})
	dir = GinkgoT().TempDir()
	o.Mode, o.Namespace, o.SecretName, o.ServiceName, o.CertDir = ModeSelf, certNS, secretName, serviceName, dir
	o.MutatingWebhook, o.ValidatingWebhook = mutating, validating
	managers++
	o.ControllerName = "cert-rotator-" + strconv.Itoa(managers)

	srv := GateServer(webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir}), ready)
	stop, err := testutil.StartManager(ctx, cfg, ctrl.Options{WebhookServer: srv}, func(mgr ctrl.Manager) error {
		// Registering a handler is what adds the webhook server to a manager.
		mgr.GetWebhookServer().Register("/noop", http.NotFoundHandler())
		return Setup(mgr, o, ready)
	})
	Expect(err).NotTo(HaveOccurred())
	return ready, stop, func() error { return srv.StartedChecker()(nil) }, dir
}

var _ = Describe("Self-managed webhook certificates", Ordered, func() {
	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: certNS}})).To(Succeed())
		// The manifests ship the Secret empty; the manager fills it.
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: certNS}})).To(Succeed())
		for _, o := range webhookConfigs() {
			Expect(k8sClient.Create(ctx, o)).To(Succeed())
		}
	})

	It("issues a CA and serving certificate, injects caBundle, then serves and turns ready", func() {
		port := freePort()
		ready, stop, started, dir := startWithCerts(Options{}, port)
		defer stop()

		Eventually(ready, "60s").Should(BeClosed())
		s, err := getSecret()
		Expect(err).NotTo(HaveOccurred())
		for _, k := range []string{"ca.crt", "ca.key", "tls.crt", "tls.key"} {
			Expect(s.Data).To(HaveKey(k))
		}
		Eventually(func(g Gomega) {
			m, v, err := caBundles()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m).To(Equal(s.Data["ca.crt"]))
			g.Expect(v).To(Equal(s.Data["ca.crt"]))
		}).Should(Succeed())

		// The rotator reports ready once the cert file exists; the writer put the key there first.
		Expect(readFile(dir, "tls.crt")).To(Equal(s.Data["tls.crt"]))
		Expect(readFile(dir, "tls.key")).To(Equal(s.Data["tls.key"]))
		for n, want := range map[string]os.FileMode{"tls.key": 0o600, "tls.crt": 0o644} {
			fi, err := os.Stat(filepath.Join(dir, n))
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(want), n)
		}

		leaf := leafOf(s.Data["tls.crt"])
		Expect(leaf.DNSNames).To(ContainElements(serviceName+"."+certNS+".svc", serviceName+"."+certNS+".svc.cluster.local"))

		// The webhook server serves the issued certificate, trusted through the injected CA.
		Eventually(started).Should(Succeed())
		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM(s.Data["ca.crt"])).To(BeTrue())
		Eventually(func() error {
			conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
				&tls.Config{RootCAs: pool, ServerName: serviceName + "." + certNS + ".svc", MinVersion: tls.VersionTLS12})
			if err == nil {
				_ = conn.Close()
			}
			return err
		}).Should(Succeed())
		Expect(servedLeaf(port)).To(Equal(leaf.Raw))
	})

	It("restores a caBundle someone removed", func() {
		_, stop, _, _ := startWithCerts(Options{}, freePort())
		defer stop()
		s, err := getSecret()
		Expect(err).NotTo(HaveOccurred())

		v := &admissionv1.ValidatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: validating}, v)).To(Succeed())
		v.Webhooks[0].ClientConfig.CABundle = nil
		Expect(k8sClient.Update(ctx, v)).To(Succeed())

		Eventually(func(g Gomega) {
			_, vb, err := caBundles()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(vb).To(Equal(s.Data["ca.crt"]))
		}).Should(Succeed())
	})

	It("rotates the serving certificate and the CA before they expire and follows with caBundle", func() {
		// A fresh install (empty Secret) with certificates that are due for renewal within seconds.
		sec, err := getSecret()
		Expect(err).NotTo(HaveOccurred())
		sec.Data = nil
		Expect(k8sClient.Update(ctx, sec)).To(Succeed())
		port := freePort()
		ready, stop, _, dir := startWithCerts(Options{
			CADuration: 20 * time.Second, ServerDuration: 15 * time.Second,
			Lookahead: 8 * time.Second, CheckFrequency: 500 * time.Millisecond,
		}, port)
		defer stop()
		Eventually(ready, "60s").Should(BeClosed())
		var firstServed []byte
		Eventually(func() (err error) { firstServed, err = servedLeaf(port); return err }).Should(Succeed())

		var oldCA, oldLeaf []byte
		Eventually(func(g Gomega) {
			s, err := getSecret()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Data).To(HaveKey("ca.crt"))
			oldCA, oldLeaf = s.Data["ca.crt"], s.Data["tls.crt"]
		}).Should(Succeed())
		caExpiry := leafOf(oldCA).NotAfter

		Eventually(func(g Gomega) {
			s, err := getSecret()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Data["ca.crt"]).NotTo(Equal(oldCA))
			g.Expect(s.Data["tls.crt"]).NotTo(Equal(oldLeaf))
			// The new serving certificate chains to the new CA ...
			pool := x509.NewCertPool()
			g.Expect(pool.AppendCertsFromPEM(s.Data["ca.crt"])).To(BeTrue())
			_, err = leafOf(s.Data["tls.crt"]).Verify(x509.VerifyOptions{
				Roots: pool, DNSName: serviceName + "." + certNS + ".svc",
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			})
			g.Expect(err).NotTo(HaveOccurred())
			// ... and both webhook configurations trust it.
			m, v, err := caBundles()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m).To(Equal(s.Data["ca.crt"]))
			g.Expect(v).To(Equal(s.Data["ca.crt"]))
		}, "60s", "200ms").Should(Succeed())
		Expect(time.Now()).To(BeTemporally("<", caExpiry), "the CA was replaced only after it expired")

		// The writer follows the Secret and the webhook server reloads the rewritten files.
		Eventually(func(g Gomega) {
			s, err := getSecret()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(readFile(dir, "tls.crt")).To(Equal(s.Data["tls.crt"]))
			g.Expect(readFile(dir, "tls.key")).To(Equal(s.Data["tls.key"]))
			served, err := servedLeaf(port)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(served).NotTo(Equal(firstServed))
			g.Expect(served).To(Equal(leafOf(s.Data["tls.crt"]).Raw))
		}, "60s", "200ms").Should(Succeed())

		// Rotation keeps going: a certificate issued later replaces this one too.
		s1, err := getSecret()
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			s2, err := getSecret()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s2.Data["tls.crt"]).NotTo(Equal(s1.Data["tls.crt"]))
		}, "60s", "200ms").Should(Succeed())
	})
})

var _ = Describe("OLM-provided certificates", func() {
	It("is ready at once and touches no Secret or webhook configuration", func() {
		ready := make(chan struct{})
		Expect(Setup(nil, Options{Mode: ModeOLM}, ready)).To(Succeed())
		Expect(ready).To(BeClosed())
	})

	It("leaves the certificate directory to OLM: no writer copies a Secret into it", func() {
		const ns = "elo-certs-olm"
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
			Data:       map[string][]byte{"tls.crt": []byte("C"), "tls.key": []byte("K")},
		})).To(Succeed())
		dir := GinkgoT().TempDir()
		ready := make(chan struct{})
		o := Options{Mode: ModeOLM, Namespace: ns, SecretName: secretName, ServiceName: serviceName,
			CertDir: dir, MutatingWebhook: mutating, ControllerName: "cert-rotator-olm"}
		stop, err := testutil.StartManager(ctx, cfg, ctrl.Options{}, func(mgr ctrl.Manager) error {
			return Setup(mgr, o, ready)
		})
		Expect(err).NotTo(HaveOccurred())
		defer stop()
		Expect(ready).To(BeClosed())
		// In ModeSelf the writer copies within milliseconds of its cache sync.
		Consistently(func() ([]os.DirEntry, error) { return os.ReadDir(dir) }, "3s").Should(BeEmpty())
	})
})
