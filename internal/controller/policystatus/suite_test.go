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

package policystatus_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"
)

// The suite starts one real kube-apiserver + etcd with the CRDs installed (decisiontest). Each
// group of specs starts the manager it needs (decisiontest.StartManager), with every controller
// of the decision, playing the kubelet, the node daemon and kube-controller-manager itself.

var (
	ctx       context.Context
	k8sClient client.Client
)

func TestPolicyStatus(t *testing.T) {
	testutil.RunSuite(t, "Policy Status Suite", decisiontest.StartSuite,
		func(s *testutil.Suite) { ctx, k8sClient = s.Ctx, s.Client })
}
