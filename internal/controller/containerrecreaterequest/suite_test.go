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

package containerrecreaterequest

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The suite starts one real kube-apiserver + etcd (built by `make setup-envtest`) with the CRDs
// installed. It starts no controllers: each group of specs starts the manager it needs with
// testutil.StartManager, so specs never see another group's side effects.

var (
	suite     *testutil.Suite
	ctx       context.Context
	cfg       *rest.Config
	k8sClient client.Client
)

func TestContainerRecreateRequestController(t *testing.T) {
	testutil.RunSuite(t, "ContainerRecreateRequest Controller Suite", testutil.SuiteOptions{}.Start,
		func(s *testutil.Suite) { suite, ctx, cfg, k8sClient = s, s.Ctx, s.Config, s.Client })
}
