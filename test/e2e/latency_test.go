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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/utils"
)

// Scenario 8 of the e2e issue: the same failing HTTP probe on native and on enrolled pods, side
// by side; the time from the first failing probe to the new container's start is measured with
// the application's own timestamps (it logs every failed probe and its start, in Unix ns).

func appLog(ns, pod string, previous bool) (string, error) {
	b, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: appContainer, Previous: previous}).
		DoRaw(context.Background())
	return string(b), err
}

// restartLatency makes the pod sick, waits for its restart and returns first failed probe -> start.
func restartLatency(ns string, p corev1.Pod) time.Duration {
	before := containerStatus(&p, appContainer).RestartCount
	setSick(p, true)
	Eventually(restartCount(ns, p.Name)).WithTimeout(60*time.Second).Should(BeNumerically(">", before), "restart of %s", p.Name)
	var prev, cur string
	Eventually(func() error {
		var err error
		if prev, err = appLog(ns, p.Name, true); err != nil {
			return err
		}
		if cur, err = appLog(ns, p.Name, false); err != nil {
			return err
		}
		if _, err = utils.AppStarted(cur); err != nil {
			return err
		}
		if _, _, ok := utils.AppLogTimes(prev); !ok {
			return fmt.Errorf("no failed probe after the switch in the previous log of %s:\n%s", p.Name, prev)
		}
		return nil
	}).WithTimeout(20 * time.Second).Should(Succeed())
	_, firstFailure, _ := utils.AppLogTimes(prev)
	started, _ := utils.AppStarted(cur)
	return started.Sub(firstFailure)
}

var _ = Describe("restart latency, native kubelet vs enrolled (scenario 8)", func() {
	It("check: the enrolled path adds at most 1 s at p99 over the native one (20 restarts each, figures reported)", func() {
		ns := newNamespace("latency")
		// Nothing in the policy may hold these restarts: the figure is the path's own cost.
		createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{
			MaxUnavailable: ptr.To(intstr.FromString("100%")),
			MaxFailing:     ptr.To(intstr.FromString("100%")),
			RateLimit:      policyv1alpha1.RateLimit{RestartsPerMinute: 600, Burst: 100},
		})
		const replicas, rounds = 4, 5
		deployApp(ns, app{name: "native", replicas: replicas, probe: httpProbe()})
		deployApp(ns, app{name: "enrolled", replicas: replicas, probe: httpProbe(), enrolled: true})
		for _, p := range appPods(ns, "native") {
			Expect(p.Spec.Containers[0].LivenessProbe).NotTo(BeNil())
		}
		for _, p := range appPods(ns, "enrolled") {
			Expect(p.Spec.Containers[0].LivenessProbe).To(BeNil())
		}

		samples := map[string][]time.Duration{}
		var mu sync.Mutex
		for r := range rounds {
			By(fmt.Sprintf("round %d/%d: all %d pods sick at once", r+1, rounds, 2*replicas))
			var wg sync.WaitGroup
			for _, kind := range []string{"native", "enrolled"} {
				for _, p := range appPods(ns, kind) {
					wg.Go(func() {
						defer GinkgoRecover()
						d := restartLatency(ns, p)
						mu.Lock()
						samples[kind] = append(samples[kind], d)
						mu.Unlock()
					})
				}
			}
			wg.Wait()
			// The kubelet's crash-loop back-off (5 s here) is skipped for a container that ran longer.
			time.Sleep(6 * time.Second)
		}

		n, e := samples["native"], samples["enrolled"]
		Expect(n).To(HaveLen(replicas * rounds))
		Expect(e).To(HaveLen(replicas * rounds))
		np50, np99 := utils.Percentile(n, 50), utils.Percentile(n, 99)
		ep50, ep99 := utils.Percentile(e, 50), utils.Percentile(e, 99)
		var b strings.Builder
		fmt.Fprintf(&b, "scenario 8: first failing HTTP probe -> container restarted (periodSeconds 1, failureThreshold 3)\n")
		fmt.Fprintf(&b, "native   (kubelet)  n=%d p50=%v p99=%v\n", len(n), np50.Round(time.Millisecond), np99.Round(time.Millisecond))
		fmt.Fprintf(&b, "enrolled (operator) n=%d p50=%v p99=%v\n", len(e), ep50.Round(time.Millisecond), ep99.Round(time.Millisecond))
		fmt.Fprintf(&b, "added by the enrolled path: p50 %+v, p99 %+v (limit 1s at p99)\n",
			(ep50 - np50).Round(time.Millisecond), (ep99 - np99).Round(time.Millisecond))
		fmt.Fprintf(&b, "native samples:   %v\nenrolled samples: %v\n", rounded(n), rounded(e))
		AddReportEntry("scenario 8 latency", b.String())
		GinkgoWriter.Print(b.String())
		_ = os.WriteFile(filepath.Join(reportDir, "latency.txt"), []byte(b.String()), 0o644)

		Expect(ep99-np99).To(BeNumerically("<=", time.Second), b.String())
	})
})

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}
