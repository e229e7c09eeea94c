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

package testutil

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // the suite helpers are Ginkgo helpers
	. "github.com/onsi/gomega"    //nolint:revive

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Suite is the envtest bootstrap every Ginkgo suite of the operator shares: one real
// kube-apiserver + etcd with the operator's CRDs and, when asked, some of its webhooks registered
// with the apiserver and served by a manager of the suite. Start it in BeforeSuite and stop it in
// AfterSuite:
//
//	var _ = BeforeSuite(func() {
//		suite = testutil.StartSuite(testutil.SuiteOptions{Webhooks: []string{"mpod-v1.kb.io"}, Serve: setup})
//		ctx, cfg, k8sClient = suite.Ctx, suite.Config, suite.Client
//	})
//	var _ = AfterSuite(func() { suite.Stop() })
//
// or let RunSuite write that.
type Suite struct {
	Ctx    context.Context
	Config *rest.Config
	Client client.Client

	opts        SuiteOptions
	env         *envtest.Environment
	cancel      context.CancelFunc
	stopServing func()
}

// SuiteOptions say what the suite's apiserver needs.
type SuiteOptions struct {
	// Webhooks names the webhooks of config/webhook/manifests.yaml that the apiserver calls. Only
	// these are registered: a webhook the suite does not serve would fail every request it covers.
	Webhooks []string
	// Serve sets up the manager that serves Webhooks; it is started with the suite.
	Serve func(ctrl.Manager) error
}

// StartSuite starts the apiserver, and the webhook manager when the options name webhooks. It
// fails the suite on any error.
func StartSuite(o SuiteOptions) *Suite {
	GinkgoHelper()
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	s := &Suite{opts: o}
	s.Ctx, s.cancel = context.WithCancel(context.Background())
	var err error
	if len(o.Webhooks) > 0 {
		Expect(o.Serve).NotTo(BeNil(), "SuiteOptions.Serve is required with Webhooks")
	}
	s.env, err = NewEnvironment(o.Webhooks...)
	Expect(err).NotTo(HaveOccurred())
	s.Config, err = s.env.Start()
	Expect(err).NotTo(HaveOccurred())
	s.Client, err = client.New(s.Config, client.Options{Scheme: Scheme()})
	Expect(err).NotTo(HaveOccurred())
	if len(o.Webhooks) > 0 {
		s.ServeWebhooks()
	}
	return s
}

// Start is StartSuite(o), as a value for RunSuite.
func (o SuiteOptions) Start() *Suite { return StartSuite(o) }

// RunSuite is a package's Kubebuilder suite_test.go written once: it runs the package's Ginkgo
// specs as the suite called name, on a suite that start brings up before them (BeforeSuite) and
// that is stopped after them (AfterSuite). set points the package's variables, which the specs
// use (ctx, k8sClient, ...), at the started suite.
func RunSuite(t *testing.T, name string, start func() *Suite, set func(*Suite)) {
	RegisterFailHandler(Fail)
	var s *Suite
	BeforeSuite(func() {
		s = start()
		set(s)
	})
	AfterSuite(func() {
		if s != nil {
			s.Stop()
		}
	})
	RunSpecs(t, name)
}

// UserKubeconfig adds a user of the suite's apiserver (authenticated by a client certificate,
// with only the rights RBAC gives it) and returns a kubeconfig for it, as kubectl reads one.
func (s *Suite) UserKubeconfig(name string, groups ...string) []byte {
	GinkgoHelper()
	u, err := s.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	Expect(err).NotTo(HaveOccurred())
	kc, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	return kc
}

// ServeWebhooks starts the manager that serves the suite's webhooks and waits until its TLS port
// answers. Specs about a webhook server that is down call StopServingWebhooks, then this again.
func (s *Suite) ServeWebhooks() {
	GinkgoHelper()
	wo := &s.env.WebhookInstallOptions
	var err error
	s.stopServing, err = StartManager(s.Ctx, s.Config, ctrl.Options{
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir,
		}),
	}, s.opts.Serve)
	Expect(err).NotTo(HaveOccurred())
	dialer := &net.Dialer{Timeout: time.Second}
	addr := fmt.Sprintf("%s:%d", wo.LocalServingHost, wo.LocalServingPort)
	Eventually(func() error {
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // envtest's own CA
		if err != nil {
			return err
		}
		return conn.Close()
	}).Should(Succeed())
}

// StopServingWebhooks stops the webhook manager; the apiserver keeps calling the webhooks.
func (s *Suite) StopServingWebhooks() {
	if s.stopServing != nil {
		s.stopServing()
		s.stopServing = nil
	}
}

// Stop stops the webhook manager and the apiserver.
func (s *Suite) Stop() {
	GinkgoHelper()
	s.StopServingWebhooks()
	s.cancel()
	Expect(s.env.Stop()).To(Succeed())
}

// CreateNamespace creates namespace name, or finds it there: specs of a suite share its API
// server, and more than one may use the namespace.
func (s *Suite) CreateNamespace(name string) {
	GinkgoHelper()
	err := s.Client.Create(s.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}
