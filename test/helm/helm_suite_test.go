//go:build e2e

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

// Package helm installs the operator on the local node from what `make release` writes, as a user
// would: two releases of this tree for a registry the suite serves, each pushed there with the
// release-push program of its dist/ alone.
// The first release's install.yaml is applied and deleted with kubectl; then its Helm chart is
// installed from the registry (oci://), upgraded to the second's and uninstalled with the helm binary a user has (built
// from the Go module proxy, hack/helm-build). Each uninstall is checked to leave nothing. `make
// test-e2e` runs it after test/e2e and test/quickstart (hack/local-cluster/e2e.sh sets the
// environment it reads).
package helm

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/enhanced-liveness/enhanced-liveness-operator/test/specreport"
)

func TestHelm(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyPollingInterval(time.Second)
	RunSpecs(t, "Release install manifest and Helm chart suite")
}

func mustEnv(key string) string {
	v := os.Getenv(key)
	Expect(v).NotTo(BeEmpty(), "%s is not set: run `make test-e2e` (hack/local-cluster/e2e.sh)", key)
	return v
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Where the suite's time went, slowest first (.ci/run prints the head of it).
var _ = ReportAfterSuite("durations", func(r Report) {
	if dir := os.Getenv("E2E_REPORT_DIR"); dir != "" {
		if err := specreport.Write(dir, "helm", r); err != nil {
			GinkgoWriter.Printf("durations report: %v\n", err)
		}
	}
})
