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
	"time"

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
)

// A manager that measured the API server's clock 2 h ahead of its own writes the RestartHold's
// times on the API server's clock, and a next leader reads them back onto its own.
var _ = Describe("Decision controller, a measured API server clock", Ordered, func() {
	It("writes the hold's times on the API server's clock, and the next leader goes on from them", func() {
		clock := clocktesting.NewFakeClock(time.Now())
		apiClock := apiclock.New(clock)
		// One response: sent and received 20 ms apart, the API server's Date 2 h ahead (whole
		// seconds: its time is in [date, date+1s)).
		apiClock.Observe(clock.Now(), clock.Now().Add(20*time.Millisecond), clock.Now().Add(2*time.Hour+10*time.Millisecond-500*time.Millisecond))
		c := dt.TestConfig()
		c.Clock, c.APIClock = clock, apiClock

		ns, node := dt.NewNamespace(), dt.Name("measured-node")
		dt.RenewLease(node, clock.Now())
		pods := dt.FailingFleet(ns, node, "measured", 6)
		states := func() []dt.ProbeState { return dt.AllFailed(pods) }
		hold := dt.RestartHold(ns, "Deployment", "measured", "app")
		stop := dt.StartManager(c)
		onset := clock.Now()
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Eventually(hold, dt.Wait, dt.Poll).Should(HaveField("Status.Reason", string(policyv1alpha1.HoldFailureStorm)))
		st := hold().Status
		Expect(st.Onset.Time).To(BeTemporally("~", onset.Add(2*time.Hour), 2*time.Second), "onset not on the API server's clock")
		Expect(st.WaitStart.Time).To(BeTemporally("~", onset.Add(2*time.Hour), 2*time.Second))
		Expect(st.NextCanary.Time).To(BeTemporally("~", onset.Add(2*time.Hour+30*time.Second), 2*time.Second))

		By("a new leader on the same clocks: the canary goes at the onset + 30 s, neither before nor 2 h later")
		stop()
		clock.Step(10 * time.Second)
		stop = dt.StartManager(c)
		defer stop()
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
		clock.Step(onset.Add(30 * time.Second).Sub(clock.Now()))
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		Eventually(hold, dt.Wait, dt.Poll).Should(HaveField("Status.Canary.RestartedAt.Time", BeTemporally("~", onset.Add(2*time.Hour+30*time.Second), 2*time.Second)))
	})
})
