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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/plugin/status"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
)

// pluginBinary builds kubectl-enhancedliveness from this tree, once per suite run.
var pluginBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "elo-plugin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kubectl-enhancedliveness")
	_, err = project.Run(exec.Command("go", "build", "-o", bin, "./cmd/kubectl-enhancedliveness"))
	return bin, err
})

// namespaceReader binds user to the built-in "view" ClusterRole in ns only: pods, events and,
// through the operator's aggregated viewer roles, its policies, RestartHolds and requests;
// nothing cluster-scoped.
func namespaceReader(ns, user string) { bindInNamespace(ns, user, "view") }

// pluginAs runs the plugin as user (impersonated through the suite's admin kubeconfig, with
// kubectl's own --as flags) and returns its standard output; it must exit 0.
func pluginAs(user string, args ...string) string {
	GinkgoHelper()
	bin, err := pluginBinary()
	Expect(err).NotTo(HaveOccurred())
	args = append(args, "--kubeconfig", os.Getenv("KUBECONFIG"), "--as", user, "--as-group", "system:authenticated")
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "kubectl enhancedliveness %s: %s", strings.Join(args, " "), stderr.String())
	_, _ = GinkgoWriter.Write(out)
	return string(out)
}

// stormRule matches the FailureStorm rule of the wrong-probe Deployment (10 replicas, maxFailing
// 50%), judged on the whole Deployment or on its new revision.
const stormRule = `\d+ of 10 pods of Deployment/web are failing( \(\d+ of them starting to fail\))?, more than maxFailing 5 |` +
	`\d+ of the \d+ probed pods of ReplicaSet/web-[a-z0-9]+, a revision of Deployment/web, are failing or starting to fail, more than maxFailing \d+ of them`

// checkPluginOnStorm runs explain and status as a user who may only read ns, on the wrong-probe
// storm: a held pod shows the storm, its numbers and the next canary; the canary's pod shows its
// request and its outcome; status -n agrees with the policy's status.
func checkPluginOnStorm(pol *policyv1alpha1.EnhancedLivenessPolicy) {
	GinkgoHelper()
	ns, user := pol.Namespace, "reader-"+pol.Namespace
	namespaceReader(ns, user)

	restarted := map[string]appsv1alpha1.ContainerRecreateRequest{}
	for _, c := range crrsIn(ns) {
		restarted[c.Spec.PodName] = c
	}
	Expect(restarted).NotTo(BeEmpty(), "the hold's canary was restarted")
	for _, p := range appPods(ns, "web") {
		if _, ok := restarted[p.Name]; ok || !hasEvent(ns, p.Name, "RestartHeld", "", "FailureStorm:")() {
			continue
		}
		out := pluginAs(user, "explain", p.Name, "-n", ns)
		Expect(out).To(ContainSubstring("FailureStorm"))
		// The rule is the decision's words when this pod's hold began: the storm of the whole
		// Deployment, or, for a pod held while the rollout had made only a few, the storm of the
		// new revision (which of the two depends on how far the rollout had got).
		Expect(out).To(MatchRegexp(stormRule), "the rule with its numbers")
		Expect(out).To(ContainSubstring("next canary"))
		Expect(out).To(ContainSubstring("forbidden to you"), "the cluster-scoped report is named, not read")
		break
	}
	for pod, c := range restarted {
		Eventually(func() appsv1alpha1.ContainerRecreateRequestPhase {
			Expect(k8s.Get(context.Background(), clientKey(&c), &c)).To(Succeed())
			return c.Status.Phase
		}).WithTimeout(time.Minute).Should(Equal(appsv1alpha1.RecreateSucceeded))
		out := pluginAs(user, "explain", pod, "-n", ns)
		Expect(out).To(ContainSubstring(c.Name), "the request")
		Expect(out).To(ContainSubstring(string(appsv1alpha1.RecreateSucceeded)), "its outcome")
		break
	}
	Eventually(func(g Gomega) {
		var st status.Status
		g.Expect(json.Unmarshal([]byte(pluginAs(user, "status", "-n", ns, "-o", "json")), &st)).To(Succeed())
		g.Expect(st.Policies).To(HaveLen(1))
		got := policyStatusOf(pol)
		g.Expect(st.Policies[0].HeldNow).To(Equal(got.HeldPodsTotal), "held now")
		g.Expect(st.Policies[0].Enrolled).To(Equal(got.EnrolledPods), "enrolled pods")
		g.Expect(st.Policies[0].HeldByReason["FailureStorm"]).To(BeNumerically(">", 0))
	}).WithTimeout(30 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
}

// policyStatusOf reads the policy's status now.
func policyStatusOf(p *policyv1alpha1.EnhancedLivenessPolicy) policyv1alpha1.EnhancedLivenessPolicyStatus {
	GinkgoHelper()
	Expect(k8s.Get(context.Background(), clientKey(p), p)).To(Succeed())
	return p.Status
}
