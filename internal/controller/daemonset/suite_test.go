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

package daemonset

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The suite starts one real kube-apiserver + etcd; the specs start the DaemonSet controller.

// packagingSpecTimeout bounds waiting for controllers and the API server; generous because the
// suite shares two CPUs with everything else that runs in CI.
const packagingSpecTimeout = "30s"

var (
	ctx       context.Context
	cfg       *rest.Config
	k8sClient client.Client
)

func TestControllers(t *testing.T) {
	testutil.RunSuite(t, "DaemonSet Controller Suite", testutil.SuiteOptions{}.Start,
		func(s *testutil.Suite) { ctx, cfg, k8sClient = s.Ctx, s.Config, s.Client })
}
