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
package wiring

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The suite runs a real kube-apiserver + etcd with the CRDs. Each spec starts the daemon's
// controllers for a node of its own (testutil.StartManager) against loopback probe targets and
// the test CRI server, so specs never see each other's writes. The pods are sealed with the
// suites' key (testutil.Seal), which the operator namespace's trust ConfigMap lists.

var (
	suite     *testutil.Suite
	ctx       context.Context
	cfg       *rest.Config
	k8sClient client.Client
)

func TestDaemonNode(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Daemon Wiring Suite")
}

var _ = BeforeSuite(func() {
	suite = testutil.StartSuite(testutil.SuiteOptions{})
	ctx, cfg, k8sClient = suite.Ctx, suite.Config, suite.Client
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appsv1alpha1.DefaultOperatorNamespace}})).To(Succeed())
	// The public key the daemons verify seals with (testutil.Seal signs with its private half).
	Expect(k8sClient.Create(ctx, testutil.TrustConfigMap(appsv1alpha1.DefaultOperatorNamespace))).To(Succeed())
})

var _ = AfterSuite(func() { suite.Stop() })
