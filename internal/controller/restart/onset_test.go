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

package restart_test

import (
	"fmt"
	"time"

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// A workload storm is a correlated onset: pods failing since long before a new hang do not hold
// it. The manager's clock is fake; the daemon's heartbeat and fresh results are played at its
// time.
var _ = Describe("Decision controller, storms as a correlated onset", Ordered, func() {
	var (
		stop  func()
		clock *clocktesting.FakeClock
	)
	BeforeAll(func() {
		clock = clocktesting.NewFakeClock(time.Now())
		c := dt.TestConfig()
		c.Clock = clock
		// The manager's default: held pods of a storm, re-decided every recheck, keep its settle
		// timer moving.
		c.StormSettle = 30 * time.Second
		stop = dt.StartManager(c)
	})
	AfterAll(func() { stop() })

	It("restarts a new hang beside siblings held in a storm for long, and still holds pods failing together", func() {
		ns, node := dt.NewNamespace(), dt.Name("onset-node")
		dt.RenewLease(node, clock.Now())
		// maxHold never: the old storm is held all along, no canary moves it.
		dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxHold = &metav1.Duration{Duration: 0}
		})
		labels := map[string]string{"app": "onset"}
		rs := dt.Deployment(ns, "onset", 4, labels)
		var pods []*corev1.Pod
		for i := range 4 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("onset-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels}))
		}
		failing := func(ps ...*corev1.Pod) []dt.ProbeState {
			var out []dt.ProbeState
			for _, p := range ps {
				out = append(out, dt.Failed(p, "app", 1))
			}
			return out
		}
		By("3 of 4 pods fail together: a storm, held")
		old := failing(pods[:3]...)
		dt.ReportAt(node, clock.Now(), pods, old...)
		Eventually(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).Should(ConsistOf(
			ContainSubstring("3 of 4 pods of Deployment/onset are failing")))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())

		By("10 minutes on, the daemon refreshing its results every 30 s, the fourth pod hangs")
		for range 20 {
			clock.Step(30 * time.Second)
			dt.RenewLease(node, clock.Now())
			dt.ReportAt(node, clock.Now(), pods, old...)
			time.Sleep(50 * time.Millisecond)
		}
		dt.ReportAt(node, clock.Now(), pods, failing(pods...)...)
		// Only the new hang is restarted: the old failures still storm among themselves.
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("onset-3"))
		Consistently(dt.CRRPods, dt.Quiet, dt.Poll).WithArguments(ns).Should(ConsistOf("onset-3"))
		Expect(dt.HeldEvents(ns, pods[3].Name, policyv1alpha1.HoldFailureStorm)()).To(BeEmpty())
	})
})
