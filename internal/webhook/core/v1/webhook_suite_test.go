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

package v1

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The suite runs a real apiserver with only the Pod webhook registered, served by a manager
// running SetupPodWebhookWithManager, so every spec goes through real admission.

const operatorNamespace = "el-operator"

var (
	ctx       context.Context
	cancel    context.CancelFunc
	k8sClient client.Client
	cfg       *rest.Config
	testEnv   *envtest.Environment
	stopMgr   func()
)

func TestAPIs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Pod Webhook Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.TODO())

	var err error
	testEnv, err = testutil.NewEnvironment(false)
	Expect(err).NotTo(HaveOccurred())
	testEnv.WebhookInstallOptions, err = testutil.WebhookInstallOptions("mpod-v1.kb.io")
	Expect(err).NotTo(HaveOccurred())
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())

	k8sClient, err = client.New(cfg, client.Options{Scheme: testutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	startWebhookManager()
})

// startWebhookManager serves the Pod webhook and waits until its TLS port answers.
func startWebhookManager() {
	GinkgoHelper()
	wo := &testEnv.WebhookInstallOptions
	var err error
	stopMgr, err = testutil.StartManager(ctx, cfg, ctrl.Options{
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir,
		}),
	}, func(mgr ctrl.Manager) error { return SetupPodWebhookWithManager(mgr, operatorNamespace) })
	Expect(err).NotTo(HaveOccurred())

	dialer := &net.Dialer{Timeout: time.Second}
	addr := fmt.Sprintf("%s:%d", wo.LocalServingHost, wo.LocalServingPort)
	Eventually(func() error {
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return err
		}
		return conn.Close()
	}).Should(Succeed())
}

var _ = AfterSuite(func() {
	if stopMgr != nil {
		stopMgr()
	}
	cancel()
	Expect(testEnv.Stop()).To(Succeed())
})
