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

// Package testutil holds what the envtest suites share: locating the envtest binaries built by
// hack/build-k8s.sh, the scheme of every API the operator uses, and starting a controller
// manager for one group of specs.
package testutil

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// RepoRoot is the repository's top directory, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Scheme returns a scheme with the core Kubernetes types and the operator's APIs.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, appsv1alpha1.AddToScheme, policyv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// AssetsDir returns KUBEBUILDER_ASSETS, or the directory hack/build-k8s.sh builds into.
// It fails loudly instead of letting envtest look elsewhere: the specs must run, not skip.
func AssetsDir() (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	matches, _ := filepath.Glob(filepath.Join(RepoRoot(), "bin", "k8s", "*-linux-*"))
	for _, m := range matches {
		if _, err := os.Stat(filepath.Join(m, "kube-apiserver")); err == nil {
			return m, nil
		}
	}
	return "", fmt.Errorf("no envtest binaries: run 'make setup-envtest' (builds bin/k8s/) or set KUBEBUILDER_ASSETS")
}

// NewEnvironment returns an envtest environment with the operator's CRDs and the named webhooks
// of config/webhook/manifests.yaml registered with its apiserver (webhookInstallOptions): the one
// way a suite, a test or a benchmark gets a control plane.
func NewEnvironment(webhooks ...string) (*envtest.Environment, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: dir,
		Scheme:                Scheme(),
	}
	if len(webhooks) > 0 {
		if env.WebhookInstallOptions, err = webhookInstallOptions(webhooks...); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// StartEnvironment starts NewEnvironment(webhooks...) for a plain Go test, which it fails on any
// error, and stops it when the test ends; it returns the environment with a client of it.
func StartEnvironment(t testing.TB, webhooks ...string) (*envtest.Environment, client.Client) {
	t.Helper()
	env, err := NewEnvironment(webhooks...)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return env, c
}

// StartManager starts a manager against cfg with setup applied, and returns a function that
// stops it and waits for it to return. Metrics and health servers are off so that several
// managers can run in one test process. opts may set Cache options, the webhook server, etc.
func StartManager(ctx context.Context, cfg *rest.Config, opts ctrl.Options, setup func(ctrl.Manager) error) (stop func(), err error) {
	if opts.Scheme == nil {
		opts.Scheme = Scheme()
	}
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	skip := true
	opts.Controller.SkipNameValidation = &skip
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := setup(mgr); err != nil {
		return nil, err
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		cancel()
		return nil, fmt.Errorf("manager cache did not sync")
	}
	return func() {
		cancel()
		<-done
	}, nil
}
