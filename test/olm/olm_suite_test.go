//go:build olm

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

// Package olm installs, upgrades and removes the operator with the real OLM on the local node:
// `operator-sdk run bundle` of a bundle of this tree, `operator-sdk run bundle-upgrade` to a
// second bundle of this tree with a higher version that replaces it, the node-scope check with the daemon's own
// token, the manager's PrometheusRule and ServiceMonitor (their CRDs applied first), the e2e
// smoke subset against the upgraded operator, `operator-sdk scorecard` and `operator-sdk cleanup`.
// Run it with `make test-olm` (hack/olm/test-olm.sh builds the tools and images, starts the node,
// the test registry and OLM, and sets the environment this suite reads).
package olm

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/specreport"
)

const (
	packageName = "enhanced-liveness-operator"
	operatorNS  = "enhanced-liveness-system"
	// managerName is the manager Deployment of the CSV; OLM names its webhook Service and
	// certificate Secret after it.
	managerName = packageName + "-controller-manager"
	daemonName  = packageName + "-daemon"
)

var (
	k8s        client.Client
	clientset  kubernetes.Interface
	restConfig *rest.Config

	operatorSDK = mustEnv("OLM_OPERATOR_SDK")
	bundleV1    = mustEnv("OLM_BUNDLE_V1")
	bundleV2    = mustEnv("OLM_BUNDLE_V2")
	// csvV1 and csvV2 are the CSVs of the two bundles (OLM_UPGRADE_FROM, OLM_UPGRADE_TO).
	csvV1      = packageName + ".v" + mustEnv("OLM_UPGRADE_FROM")
	csvV2      = packageName + ".v" + mustEnv("OLM_UPGRADE_TO")
	indexImage = mustEnv("OLM_INDEX_IMAGE")
	untarImage = mustEnv("OLM_UNTAR_IMAGE")
	appImage   = mustEnv("E2E_APP_IMAGE")
)

func mustEnv(key string) string {
	v := os.Getenv(key)
	if v == "" {
		// Read at package init: fail the whole run with the reason rather than mid-way.
		panic(key + " is not set: run the suite with `make test-olm` (hack/olm/test-olm.sh)")
	}
	return v
}

func TestOLM(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyPollingInterval(time.Second)
	SetDefaultConsistentlyPollingInterval(time.Second)
	RunSpecs(t, "OLM install, upgrade and removal on the local node")
}

var _ = BeforeSuite(func() {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	Expect(err).NotTo(HaveOccurred(), "KUBECONFIG must point at the local cluster")
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(operatorsv1.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(scheme))
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	clientset, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	restConfig = cfg
})

// run runs a command with a deadline in the current directory; see runIn.
func run(timeout time.Duration, name string, args ...string) string {
	return runIn("", timeout, nil, name, args...)
}

// runIn runs a command with a deadline in dir, shows its output as it comes and returns its
// standard output; a failure or the deadline fails the spec.
func runIn(dir string, timeout time.Duration, env []string, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, GinkgoWriter)
	cmd.Stderr = GinkgoWriter
	line := strings.TrimSpace(name[strings.LastIndex(name, "/")+1:] + " " + strings.Join(args, " "))
	By(line)
	start := time.Now()
	err := cmd.Run()
	GinkgoWriter.Printf("--- %s: %s\n", line, time.Since(start).Round(time.Second))
	Expect(ctx.Err()).NotTo(HaveOccurred(), "%s did not finish within %s", line, timeout)
	Expect(err).NotTo(HaveOccurred(), "%s failed", line)
	return out.String()
}

func sdk(timeout time.Duration, args ...string) string {
	return run(timeout, operatorSDK, args...)
}

func kubectl(args ...string) string {
	cmd := exec.Command(os.Getenv("KUBECTL"), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out) + "\n(" + err.Error() + ")"
	}
	return string(out)
}

// On failure, show what OLM and the operator were doing (before the spec's cleanups run).
var _ = JustAfterEach(func() {
	if !CurrentSpecReport().Failed() || k8s == nil {
		return
	}
	section := func(title string, args ...string) {
		GinkgoWriter.Printf("\n===== %s\n%s\n", title, kubectl(args...))
	}
	section("OLM objects in "+operatorNS, "get", "csv,sub,ip,catsrc,og", "-n", operatorNS, "-o", "wide")
	section("CSVs", "get", "csv", "-n", operatorNS, "-o", "yaml")
	section("pods", "get", "pods", "-A", "-o", "wide")
	section("events in "+operatorNS, "get", "events", "-n", operatorNS, "--sort-by=.lastTimestamp")
	section("catalog-operator", "logs", "-n", "olm", "deploy/catalog-operator", "--tail=60")
	section("olm-operator", "logs", "-n", "olm", "deploy/olm-operator", "--tail=60")
	section("manager", "logs", "-n", operatorNS, "-l", "control-plane=controller-manager", "--tail=40", "--prefix")
	section("daemon", "logs", "-n", operatorNS, "-l", "app.kubernetes.io/name=enhanced-liveness-daemon",
		"--tail=40", "--prefix")
})

// Where the suite's time went, slowest first (.ci/run prints the head of it).
var _ = ReportAfterSuite("durations", func(r Report) {
	if dir := os.Getenv("E2E_REPORT_DIR"); dir != "" {
		if err := specreport.Write(dir, "olm", r); err != nil {
			GinkgoWriter.Printf("durations report: %v\n", err)
		}
	}
})
