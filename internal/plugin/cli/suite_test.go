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

package cli

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The suite runs the plugin's commands against a real kube-apiserver with the operator's CRDs, as
// kubectl would run them: from a kubeconfig, as a user whose rights RBAC gives.

var (
	suite     *testutil.Suite
	ctx       context.Context
	k8sClient client.Client
)

func TestPlugin(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "kubectl plugin Suite")
}

var _ = BeforeSuite(func() {
	suite = testutil.StartSuite(testutil.SuiteOptions{})
	ctx, k8sClient = suite.Ctx, suite.Client
})

var _ = AfterSuite(func() { suite.Stop() })
