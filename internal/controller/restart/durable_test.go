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

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/decision"

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Holds are durable: kept in RestartHolds on the manager's clock, written once per transition, and
// read back by the next leader, which goes on where the last one was.
var _ = Describe("Decision controller, durable holds", Ordered, func() {
	var clock *clocktesting.FakeClock
	BeforeAll(func() { clock = clocktesting.NewFakeClock(time.Now()) })
	withClock := func() decision.Config {
		c := dt.TestConfig()
		c.Clock = clock
		return c
	}

	It("goes on where the hold was across a manager restart: the canary goes at the first leader's time", func() {
		ns, node := dt.NewNamespace(), dt.Name("durable-node")
		dt.RenewLease(node, clock.Now())
		pods := dt.FailingFleet(ns, node, "durable", 6)
		states := func() []dt.ProbeState { return dt.AllFailed(pods) }
		hold := dt.RestartHold(ns, "Deployment", "durable", "app")
		stop := dt.StartManager(withClock())
		onset := clock.Now()
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Eventually(hold, dt.Wait, dt.Poll).Should(HaveField("Status.Reason", string(policyv1alpha1.HoldFailureStorm)))
		written := hold().ResourceVersion

		By("decided again and again within the first wait: the record is not written again")
		for range 3 {
			clock.Step(5 * time.Second)
			dt.RenewLease(node, clock.Now())
			dt.ReportAt(node, clock.Now(), pods, states()...)
			time.Sleep(200 * time.Millisecond)
		}
		Consistently(func() string { return hold().ResourceVersion }, dt.Quiet, dt.Poll).Should(Equal(written))

		By("the leader goes; 10 s later a new one starts: it reads the hold back and holds until the onset + 30 s")
		stop()
		clock.Step(10 * time.Second)
		stop = dt.StartManager(withClock())
		defer func() { stop() }()
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
		Expect(hold().ResourceVersion).To(Equal(written))
		Expect(hold().Status.Onset.Time).To(BeTemporally("~", onset, time.Second))
		clock.Step(onset.Add(30 * time.Second).Sub(clock.Now()))
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1))
		Eventually(hold, dt.Wait, dt.Poll).Should(HaveField("Status.Canaries", int32(1)))
	})

	It("writes nothing while nothing is held, and deletes the record when the hold ends", func() {
		stop := dt.StartManager(withClock())
		defer stop()
		ns, node := dt.NewNamespace(), dt.Name("quiet-node")
		dt.RenewLease(node, clock.Now())
		labels := map[string]string{"app": "quiet"}
		rs := dt.Deployment(ns, "quiet", 4, labels)
		var pods []*corev1.Pod
		for i := range 4 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("quiet-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels}))
		}
		By("one hang, restarted: no record")
		dt.ReportAt(node, clock.Now(), pods, dt.Failed(pods[0], "app", 1))
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		Consistently(dt.RestartHolds(ns), dt.Quiet, dt.Poll).Should(BeEmpty())

		By("a storm of the other three: a record; they recover: it is deleted")
		dt.CreatePolicy(ns, "slow", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxHold = &metav1.Duration{Duration: time.Hour}
		})
		dt.ReportAt(node, clock.Now(), pods, dt.Failed(pods[1], "app", 1), dt.Failed(pods[2], "app", 1), dt.Failed(pods[3], "app", 1))
		Eventually(dt.RestartHolds(ns), dt.Wait, dt.Poll).Should(HaveLen(1))
		dt.ReportAt(node, clock.Now(), pods)
		Eventually(dt.RestartHolds(ns), dt.Wait, dt.Poll).Should(BeEmpty())
	})
})
