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
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// The suite runs a real apiserver with only the Pod webhooks registered, served by a manager
// running SetupPodWebhookWithManager, so every spec goes through real admission. No
// ValidatingAdmissionPolicy is installed: the immutability specs test the webhook alone.

const (
	operatorNamespace = "el-operator"
	operatorUser      = "system:serviceaccount:" + operatorNamespace + ":el-manager"
)

// verifyAdmission checks the pod's admission signature with the suite's key (testutil.SigningKey).
func verifyAdmission(pod *corev1.Pod) error {
	_, err := signature.VerifyAdmission(testutil.TrustedKeys(), pod)
	return err
}

var (
	suite     *testutil.Suite
	ctx       context.Context
	cfg       *rest.Config
	k8sClient client.Client
)

func TestAPIs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Pod Webhook Suite")
}

var _ = BeforeSuite(func() {
	suite = testutil.StartSuite(testutil.SuiteOptions{
		Webhooks: []string{"mpod-v1.kb.io", "vpod-v1.kb.io"},
		Serve: func(mgr ctrl.Manager) error {
			return SetupPodWebhookWithManager(mgr, Options{
				OperatorNamespace: operatorNamespace, OperatorUsername: operatorUser, Keys: testutil.StaticKeys{},
			})
		},
	})
	ctx, cfg, k8sClient = suite.Ctx, suite.Config, suite.Client
})

var _ = AfterSuite(func() { suite.Stop() })

// testNow is the time the specs sign at.
func testNow() time.Time { return time.Now() }
