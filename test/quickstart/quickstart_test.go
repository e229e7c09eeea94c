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
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/test/localregistry"
)

// The registry's repository path; REGISTRY is <node address>:<port>/quickstart.
const registryPath = "quickstart"

var _ = Describe("The quick start of docs/install.md", func() {
	It("runs as written with only a kubeconfig, a plain kubectl on PATH and a registry on the node",
		runQuickStart, SpecTimeout(40*time.Minute))
})

func runQuickStart(ctx SpecContext) {
	kubeconfig := mustEnv("KUBECONFIG")
	hostsDir := mustEnv("E2E_CONTAINERD_HOSTS_DIR")
	kubectl := mustEnv("KUBECTL")
	root, err := filepath.Abs("../..")
	Expect(err).NotTo(HaveOccurred())

	By("reading the block from docs/install.md")
	page, err := os.ReadFile(filepath.Join(root, "docs/install.md"))
	Expect(err).NotTo(HaveOccurred())
	block, err := ExtractBlock(string(page))
	Expect(err).NotTo(HaveOccurred())

	By("serving a registry on the node's address, plain HTTP")
	host, stop, err := localregistry.Start(nodeAddress(kubeconfig), GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop)
	By("telling the node's containerd that " + host + " is a plain-HTTP registry (hosts.toml)")
	untrust, err := localregistry.TrustPlainHTTP(hostsDir, host)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(untrust)

	By("putting a plain kubectl, and nothing else of the cluster's, on PATH")
	kubectlDir := GinkgoT().TempDir()
	Expect(os.Symlink(kubectl, filepath.Join(kubectlDir, "kubectl"))).To(Succeed())
	env, err := UserEnv(kubectlDir, map[string]string{
		"KUBECONFIG": kubeconfig, "REGISTRY": host + "/" + registryPath, "INSECURE_REGISTRY": "true",
	})
	Expect(err).NotTo(HaveOccurred())

	By("running the block with bash, every step checked")
	logPath := filepath.Join(envOr("E2E_REPORT_DIR", filepath.Join(root, "bin/e2e-report")), "quickstart.log")
	Expect(os.MkdirAll(filepath.Dir(logPath), 0o755)).To(Succeed())
	logFile, err := os.Create(logPath)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = logFile.Close() }()
	var tail tailBuffer
	start := time.Now()
	err = RunBlock(ctx, block, root, env, io.MultiWriter(GinkgoWriter, logFile, &tail))
	took := time.Since(start).Round(time.Second)
	_, _ = fmt.Fprintf(GinkgoWriter, "quick start block: %s (log %s)\n", took, logPath)
	AddReportEntry("quick start block duration", took.String())
	Expect(err).NotTo(HaveOccurred(), "the block failed after %s; its last output:\n%s", took, tail.String())

	By("the registry holds both images the block pushed")
	Expect(localregistry.Catalog(host)).To(ContainElements(registryPath+"/enhanced-liveness-operator",
		registryPath+"/enhanced-liveness-sample-app"))

	expectNothingLeft(ctx, kubeconfig)
}

// expectNothingLeft waits for every object of the operator and of the sample to be gone.
func expectNothingLeft(ctx SpecContext, kubeconfig string) {
	By("nothing of the operator or the sample is left")
	c := clusterClient(kubeconfig)
	gone := func(gvk schema.GroupVersionKind, namespace, name string) func() error {
		return func() error {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err == nil {
				return fmt.Errorf("%s %s/%s still exists", gvk.Kind, namespace, name)
			}
			return err
		}
	}
	const admission = "admissionregistration.k8s.io"
	v1 := func(group, kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
	}
	for _, o := range []struct {
		gvk             schema.GroupVersionKind
		namespace, name string
	}{
		{v1("", "Namespace"), "", "elo-quickstart"},
		{v1("", "Namespace"), "", "enhanced-liveness-system"},
		{v1("apiextensions.k8s.io", "CustomResourceDefinition"), "", "nodepodprobes.apps.enhancedliveness.io"},
		{v1("apiextensions.k8s.io", "CustomResourceDefinition"), "", "containerrecreaterequests.apps.enhancedliveness.io"},
		{v1("apiextensions.k8s.io", "CustomResourceDefinition"), "", "enhancedlivenesspolicies.policy.enhancedliveness.io"},
		{v1("apiextensions.k8s.io", "CustomResourceDefinition"), "", "nodepodprobereports.apps.enhancedliveness.io"},
		{v1("apiextensions.k8s.io", "CustomResourceDefinition"), "", "restartholds.policy.enhancedliveness.io"},
		{v1(admission, "MutatingWebhookConfiguration"), "", "enhanced-liveness-operator-mutating-webhook-configuration"},
		{v1(admission, "ValidatingWebhookConfiguration"), "", "enhanced-liveness-operator-validating-webhook-configuration"},
		{v1(admission, "ValidatingAdmissionPolicy"), "", "enhanced-liveness-operator-pod-probe-immutable"},
		{v1(admission, "ValidatingAdmissionPolicy"), "", "enhanced-liveness-operator-daemon-node-scope"},
		{v1(admission, "ValidatingAdmissionPolicy"), "", "enhanced-liveness-operator-restart-holds"},
	} {
		Eventually(gone(o.gvk, o.namespace, o.name)).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	}
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

// nodeAddress is E2E_NODE_IP, else the host of the kubeconfig's API server (on the local node,
// the API server listens on the node's address).
func nodeAddress(kubeconfig string) string {
	if ip := os.Getenv("E2E_NODE_IP"); ip != "" {
		return ip
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	u, err := url.Parse(cfg.Host)
	Expect(err).NotTo(HaveOccurred())
	return u.Hostname()
}

func clusterClient(kubeconfig string) client.Client {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// tailBuffer keeps the last 8 KiB written to it, for the failure message.
type tailBuffer struct{ b bytes.Buffer }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b.Write(p)
	if over := t.b.Len() - 8<<10; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.TrimSpace(t.b.String()) }
