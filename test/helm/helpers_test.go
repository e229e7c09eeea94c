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

package helm

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
)

// scraper reads a metrics endpoint of the operator (HTTPS, self-signed, authenticated and
// authorized through the API server).
type scraper func(g Gomega, endpoint string) string

// newScraper returns a scraper that presents the token of a ServiceAccount bound to the chart's
// metrics reader ClusterRole, as a Prometheus would be; both are removed when the suite ends.
func newScraper(ctx context.Context, k8s client.Client) scraper {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "elo-helm-scraper", Namespace: "default"}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "elo-helm-scraper"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole",
			Name: "enhanced-liveness-operator-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}}}
	for _, o := range []client.Object{sa, binding} {
		Expect(k8s.Create(ctx, o)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = k8s.Delete(ctx, o) })
	}
	out, err := project.Run(exec.CommandContext(ctx, mustEnv("KUBECTL"), "create", "token", sa.Name, "-n", sa.Namespace, "--duration=2h"))
	Expect(err).NotTo(HaveOccurred())
	token := strings.TrimSpace(out)
	hc := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed, on the node
	return func(g Gomega, url string) string {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		g.Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := hc.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = res.Body.Close() }()
		b, err := io.ReadAll(res.Body)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.StatusCode).To(Equal(http.StatusOK), "GET %s: %s", url, b)
		return string(b)
	}
}

// postSick makes the e2e app hang: its /healthz fails until the container restarts (the pod IP is
// on the node's bridge, reachable from this host).
func postSick(podIP string) {
	GinkgoHelper()
	hc := &http.Client{Timeout: 3 * time.Second}
	Eventually(func() error {
		resp, err := hc.Post(fmt.Sprintf("http://%s:8080/admin/sick", podIP), "text/plain", nil)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST /admin/sick: %s", resp.Status)
		}
		return nil
	}).WithTimeout(15 * time.Second).Should(Succeed())
}

// registryAddress is where the suite's registry listens: E2E_REGISTRY_ADDR (an address the local
// cluster made that every node's containerd reaches, hack/local-cluster/e2e.sh), else the host
// of the API server.
func registryAddress(apiServer string) string {
	GinkgoHelper()
	if ip := os.Getenv("E2E_REGISTRY_ADDR"); ip != "" {
		return ip
	}
	u, err := url.Parse(apiServer)
	Expect(err).NotTo(HaveOccurred())
	return u.Hostname()
}
