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

// Package e2e is the real-node end-to-end suite: it runs against the cluster of two real nodes
// that hack/local-cluster/up.sh starts (kubelets + containerds built on this machine), deploys the
// operator from config/default like a user does, and kills and restarts real containers.
// Run it with `make test-e2e` (hack/local-cluster/e2e.sh sets the environment it reads).
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/stormchart/series"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/specreport"
)

var (
	// k8s is a typed client for the cluster; cs serves logs and scale.
	k8s client.Client
	cs  *kubernetes.Clientset

	operatorImage = envOr("E2E_OPERATOR_IMAGE", "localhost/enhanced-liveness-operator:e2e")
	appImage      = envOr("E2E_APP_IMAGE", "localhost/e2e-app:e2e")
	operatorNS    = envOr("E2E_OPERATOR_NAMESPACE", appsv1alpha1.DefaultOperatorNamespace)
	reportDir     = envOr("E2E_REPORT_DIR", "bin/e2e-report")
	// preinstalled: the operator is already installed (make test-olm installs it with OLM and runs
	// the specs labelled olmSmoke); the suite then neither deploys nor removes it.
	preinstalled = os.Getenv("E2E_OPERATOR_PREINSTALLED") == "true"
)

// olmSmoke labels the specs make test-olm runs against the operator OLM installed.
const olmSmoke = "olm-smoke"

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// TestE2E runs the suite. It needs KUBECONFIG pointing at the local cluster and the images
// imported there: `make test-e2e` does both.
func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	SetDefaultConsistentlyPollingInterval(500 * time.Millisecond)
	RunSpecs(t, "real-node e2e suite")
}

// The suite runs on several Ginkgo processes (hack/local-cluster/e2e.sh: the Ginkgo CLI with
// E2E_PROCS, default 2) against one cluster with one operator: the first process deploys it once,
// every process connects, and the specs marked Serial (they disturb the manager, a daemon, a
// kubelet or a node, or measure) run alone after the others. docs/e2e.md lists which and why.
var _ = SynchronizedBeforeSuite(func() {
	connect()
	// The storm series of an earlier run would be drawn beside this run's (make storm-chart).
	Expect(os.RemoveAll(filepath.Join(reportDir, series.Dir))).To(Succeed())
	if !preinstalled {
		deployOperator()
		return
	}
	By("using the operator installed in " + operatorNS + " (E2E_OPERATOR_PREINSTALLED=true)")
	Eventually(func(g Gomega) {
		d := managerDeployment()
		g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1), "manager available")
	}).WithTimeout(2 * time.Minute).Should(Succeed())
	By("waiting for every node's daemon Lease (its heartbeat)")
	Eventually(everyDaemonLeaseFresh).WithTimeout(90 * time.Second).Should(BeTrue())
}, func() {
	if k8s == nil {
		connect()
	}
})

// connect makes this process's clients for the cluster KUBECONFIG names.
func connect() {
	GinkgoHelper()
	Expect(os.Getenv("KUBECONFIG")).NotTo(BeEmpty(),
		"KUBECONFIG must point at the local cluster: run `make test-e2e` (hack/local-cluster/e2e.sh)")
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	Expect(err).NotTo(HaveOccurred())
	cfg.QPS, cfg.Burst = 50, 100
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(scheme))
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	cs, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(reportDir, 0o755)).To(Succeed())
}

// deployOperator deploys the operator from config/default (the manager then creates the daemon
// DaemonSet) and waits for every node's daemon Lease.
func deployOperator() {
	GinkgoHelper()
	By("deploying the operator from config/default (the manager then creates the daemon DaemonSet)")
	out, err := project.Run(exec.Command("hack/local-cluster/deploy.sh", operatorImage))
	Expect(err).NotTo(HaveOccurred(), out)
	_, _ = fmt.Fprint(GinkgoWriter, out)
	By("waiting for every node's daemon Lease (its heartbeat)")
	Eventually(everyDaemonLeaseFresh).WithTimeout(90 * time.Second).Should(BeTrue())
}

// undeployOperator removes the operator as make undeploy does (the manager first).
func undeployOperator() (string, error) {
	By("undeploying the operator (make undeploy)")
	return project.Run(exec.Command("hack/local-cluster/deploy.sh", "--delete", operatorImage))
}

// The operator goes once every process has finished its specs.
var _ = SynchronizedAfterSuite(func() {}, func() {
	if k8s == nil || preinstalled {
		return
	}
	out, err := undeployOperator()
	if err != nil {
		_, _ = fmt.Fprintf(GinkgoWriter, "undeploy: %v\n%s", err, out)
		return
	}
	By("the garbage collector removes the admission policies the manager created (owned by a deleted CRD)")
	for _, name := range []string{immutabilityPolicy, "enhanced-liveness-operator-daemon-node-scope"} {
		Eventually(func() bool {
			err := k8s.Get(context.Background(), client.ObjectKey{Name: name},
				&admissionregistrationv1.ValidatingAdmissionPolicy{})
			return apierrors.IsNotFound(err)
		}).WithTimeout(60*time.Second).Should(BeTrue(), "policy %s", name)
		Eventually(func() bool {
			err := k8s.Get(context.Background(), client.ObjectKey{Name: name},
				&admissionregistrationv1.ValidatingAdmissionPolicyBinding{})
			return apierrors.IsNotFound(err)
		}).WithTimeout(60*time.Second).Should(BeTrue(), "binding %s", name)
	}
})

var _ = BeforeEach(func() {
	specNamespaces = nil
	awaitEarlierNamespaces()
})

// awaitEarlierNamespaces waits, up to 3 minutes, until the namespaces earlier specs deleted have
// no pod left. Their pods may still fail their probes while they terminate, and a spec that
// follows on the same node would see them as a node storm (the specs run in random order). Past
// the bound the spec goes on, and the log says which namespaces still had pods.
func awaitEarlierNamespaces() {
	start := time.Now()
	var left []string
	for time.Since(start) < 3*time.Minute {
		left = left[:0]
		var namespaces corev1.NamespaceList
		var pods corev1.PodList
		if k8s.List(context.Background(), &namespaces) != nil || k8s.List(context.Background(), &pods) != nil {
			break
		}
		deleted := map[string]bool{}
		for _, ns := range namespaces.Items {
			if strings.HasPrefix(ns.Name, "e2e-") && ns.DeletionTimestamp != nil {
				deleted[ns.Name] = true
			}
		}
		for _, p := range pods.Items {
			if deleted[p.Namespace] && !slices.Contains(left, p.Namespace) {
				left = append(left, p.Namespace)
			}
		}
		if len(left) == 0 {
			break
		}
		time.Sleep(time.Second)
	}
	if waited := time.Since(start); waited > time.Second {
		_, _ = fmt.Fprintf(GinkgoWriter, "waited %s for the pods of earlier specs' namespaces to go; still there in: %v\n", waited.Round(time.Second), left)
	}
}

// On failure, print what a person would look at first (before the spec's cleanups run).
var _ = JustAfterEach(func() {
	if CurrentSpecReport().Failed() && k8s != nil {
		dumpDiagnostics()
	}
})

// The failures' whole messages go to failures.txt, which .ci/run prints last: a CI log is often
// read from its end, where ginkgo's summary names only the failed spec and its line.
var _ = ReportAfterSuite("failures.txt", func(r Report) {
	var b strings.Builder
	for _, s := range r.SpecReports {
		if !s.Failed() {
			continue
		}
		fmt.Fprintf(&b, "FAILED: %s\n  at %s\n%s\n\n", s.FullText(), s.Failure.Location, s.Failure.Message)
	}
	path := filepath.Join(reportDir, "failures.txt")
	if b.Len() == 0 {
		_ = os.Remove(path)
		return
	}
	_ = os.MkdirAll(reportDir, 0o755)
	_ = os.WriteFile(path, []byte(b.String()), 0o644)
})

// Where the suite's time went, slowest first (.ci/run prints the head of it).
var _ = ReportAfterSuite("durations", func(r Report) {
	if err := specreport.Write(reportDir, "e2e", r); err != nil {
		_, _ = fmt.Fprintf(GinkgoWriter, "durations report: %v\n", err)
	}
})
