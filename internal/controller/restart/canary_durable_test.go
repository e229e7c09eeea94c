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
	"context"
	"time"

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// A canary is in its RestartHold before its restart is requested, however slow the records'
// writer is: a leader change right after the restart never releases a second canary.
var _ = Describe("Decision controller, a canary's record", Ordered, func() {
	It("is written before the canary's request: a new leader right after it releases no second canary", func() {
		clock := clocktesting.NewFakeClock(time.Now())
		c := dt.TestConfig()
		c.Clock = clock
		ns, node := dt.NewNamespace(), dt.Name("canary-node")
		dt.RenewLease(node, clock.Now())
		pods := dt.FailingFleet(ns, node, "canary", 6)
		states := func() []dt.ProbeState { return dt.AllFailed(pods) }
		hold := dt.RestartHold(ns, "Deployment", "canary", "app")

		By("the first leader's RestartHold writes reach the API server 2 s late")
		stop := dt.StartManager(c, slowRestartHoldWrites(2*time.Second))
		onset := clock.Now()
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Eventually(hold, dt.Wait, dt.Poll).Should(HaveField("Status.Reason", string(policyv1alpha1.HoldFailureStorm)))
		clock.Step(onset.Add(30 * time.Second).Sub(clock.Now()))
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Eventually(dt.CRRCount(ns), dt.Wait, 10*time.Millisecond).Should(Equal(1))
		stop()
		canary := dt.CRRs(ns)[0].Spec.PodName

		By("a new leader, its memory empty, at once: the other held pods wait for that canary's verdict")
		stop = dt.StartManager(c)
		defer stop()
		for range 2 {
			clock.Step(10 * time.Second)
			dt.RenewLease(node, clock.Now())
			dt.ReportAt(node, clock.Now(), pods, states()...)
			Consistently(dt.CRRPods, dt.Quiet, dt.Poll).WithArguments(ns).Should(ConsistOf(canary), "a second canary")
		}
		Expect(hold().Status.Canary).NotTo(BeNil())
		Expect(hold().Status.Canary.Pod).To(Equal(canary))
		Expect(hold().Status.Canaries).To(BeEquivalentTo(1))
	})
})

// slowRestartHoldWrites makes a manager's client whose RestartHold writes wait d before they are
// sent, and are not sent once the manager stops (its context is cancelled).
func slowRestartHoldWrites(d time.Duration) client.NewClientFunc {
	late := func(ctx context.Context, obj client.Object) error {
		if _, ok := obj.(*policyv1alpha1.RestartHold); !ok {
			return nil
		}
		select {
		case <-time.After(d):
			return ctx.Err()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return func(config *rest.Config, options client.Options) (client.Client, error) {
		c, err := client.NewWithWatch(config, options)
		if err != nil {
			return nil, err
		}
		return interceptor.NewClient(c, interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if err := late(ctx, obj); err != nil {
					return err
				}
				return c.Create(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				if err := late(ctx, obj); err != nil {
					return err
				}
				return c.Update(ctx, obj, opts...)
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				if err := late(ctx, obj); err != nil {
					return err
				}
				return c.Delete(ctx, obj, opts...)
			},
		}), nil
	}
}
