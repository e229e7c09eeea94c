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

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
)

// The daemon keeps its per-probe counters itself and turns them into series on scrape; this
// proves the series on the node as a Prometheus would read them: authenticated, over HTTPS.
var _ = Describe("the node daemon's per-probe metrics", func() {
	It("count a pod's probe runs by result and drop its series when the pod goes", func() {
		ns := newNamespace("metrics")
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true})
		pod := onlyPod(ns, "web")
		scrape := daemonScraper(ns, pod.Spec.NodeName)
		series := func() map[string]float64 { return probeSeriesOf(scrape(), string(pod.UID)) }

		By("successful runs are counted, once a second, with a duration sample each")
		Eventually(func(g Gomega) {
			s := series()
			g.Expect(s["successful"]).To(BeNumerically(">=", 3))
			g.Expect(s).NotTo(HaveKey("failed"), "no failed series before a failed run")
			g.Expect(s["duration_count"]).To(Equal(s["successful"] + s["unknown"]))
		}).WithTimeout(60 * time.Second).WithPolling(2 * time.Second).Should(Succeed())

		By("failed runs get their series with the first one")
		setSick(pod, true)
		Eventually(func() float64 { return series()["failed"] }).WithTimeout(60 * time.Second).
			WithPolling(time.Second).Should(BeNumerically(">=", 1))
		Eventually(restartCount(ns, pod.Name)).WithTimeout(90 * time.Second).Should(BeNumerically(">=", 1))

		By("the restarted container's runs go on in the same series")
		before := series()
		Eventually(func(g Gomega) {
			s := series()
			g.Expect(s["successful"]).To(BeNumerically(">=", before["successful"]+3))
			g.Expect(s["failed"]).To(BeNumerically(">=", before["failed"]))
		}).WithTimeout(60 * time.Second).WithPolling(2 * time.Second).Should(Succeed())

		By("the pod's series leave with it")
		Expect(k8s.Delete(context.Background(), &pod)).To(Succeed())
		Eventually(series).WithTimeout(60 * time.Second).WithPolling(2 * time.Second).Should(BeEmpty())
	})
})

// daemonScraper returns a function that reads the metrics of the node's daemon (on the node's
// InternalIP: it uses the host network) as a service account of ns allowed to GET /metrics (the
// endpoint authenticates and authorizes).
func daemonScraper(ns, node string) func() string {
	url := fmt.Sprintf("https://%s/metrics", net.JoinHostPort(nodeIP(node), strconv.Itoa(daemonset.DefaultMetricsPort)))
	return metricsScraper(ns, func() string { return url })
}

// leaderScraper reads the metrics of the manager replica that leads at the time of each read
// (the decision's counters are the leader's), on its pod IP.
func leaderScraper(ns string) func() string {
	return metricsScraper(ns, func() string {
		return fmt.Sprintf("https://%s/metrics", net.JoinHostPort(managerLeader().Status.PodIP, "8443"))
	})
}

// metricsScraper returns a function that GETs the metrics at url() as a service account of ns
// allowed to GET /metrics (both endpoints authenticate and authorize; both serve a self-signed
// certificate).
func metricsScraper(ns string, url func() string) func() string {
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "scraper", Namespace: ns}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}}}
	for _, o := range []client.Object{sa, role, binding} {
		Expect(k8s.Create(ctx, o)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = k8s.Delete(ctx, o) })
	}
	token, err := kubectl("create", "token", sa.Name, "-n", ns, "--duration=1h")
	Expect(err).NotTo(HaveOccurred())
	token = strings.TrimSpace(token)
	hc := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a pod or node of this machine, self-signed
	return func() string {
		GinkgoHelper()
		u := url()
		req, err := http.NewRequest(http.MethodGet, u, nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := hc.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = res.Body.Close() }()
		b, err := io.ReadAll(res.Body)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.StatusCode).To(Equal(http.StatusOK), "GET %s: %s", u, b)
		return string(b)
	}
}

// sampleSum adds the values of the samples of metric whose labels include every given
// name="value" pair (a text exposition; a histogram's _count is its own metric name here).
func sampleSum(text, metric string, labels ...string) float64 {
	sum := 0.0
	for line := range strings.SplitSeq(text, "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || name != metric {
			continue
		}
		lbls, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && strings.Contains(","+lbls+",", fmt.Sprintf(",%s=%q,", labels[i], labels[i+1]))
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); match && err == nil {
			sum += v
		}
	}
	return sum
}

// probeSeriesOf reads one pod's per-probe series from a text exposition: probe_total by result,
// and duration_count.
func probeSeriesOf(text, podUID string) map[string]float64 {
	out := map[string]float64{}
	for line := range strings.SplitSeq(text, "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasPrefix(name, "enhanced_liveness_daemon_probe_") {
			continue
		}
		labelText, value, ok := strings.Cut(rest, "} ")
		if !ok || !strings.Contains(labelText, `pod_uid="`+podUID+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		Expect(err).NotTo(HaveOccurred(), line)
		switch name {
		case "enhanced_liveness_daemon_probe_total":
			for l := range strings.SplitSeq(labelText, ",") {
				if r, ok := strings.CutPrefix(l, `result="`); ok {
					out[strings.TrimSuffix(r, `"`)] = v
				}
			}
		case "enhanced_liveness_daemon_probe_duration_seconds_count":
			out["duration_count"] = v
		}
	}
	return out
}
