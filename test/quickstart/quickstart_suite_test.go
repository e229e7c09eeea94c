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

package quickstart

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/enhanced-liveness/enhanced-liveness-operator/test/specreport"
)

// TestQuickstart runs the quick start spec on the local node: `make test-e2e`
// (hack/local-cluster/e2e.sh) starts the node and sets the environment it reads. Unlike the e2e
// suite it installs nothing itself: the block of docs/install.md does.
func TestQuickstart(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyPollingInterval(time.Second)
	RunSpecs(t, "quick start suite")
}

// Where the suite's time went, slowest first (.ci/run prints the head of it).
var _ = ReportAfterSuite("durations", func(r Report) {
	if dir := os.Getenv("E2E_REPORT_DIR"); dir != "" {
		if err := specreport.Write(dir, "quickstart", r); err != nil {
			GinkgoWriter.Printf("durations report: %v\n", err)
		}
	}
})
