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

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restarthold"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// The times one replica keeps in the API for the next leader and for every webhook replica (the
// RestartHolds, status.recentEvictions) are on the API server's clock; one that lies in the future
// of it (a replica whose clock ran ahead wrote it) is taken as now, and written back so.
var _ = Describe("Decision controller, times kept in the API", Ordered, func() {
	var clock *clocktesting.FakeClock
	BeforeAll(func() { clock = clocktesting.NewFakeClock(time.Now()) })
	withClock := func() decision.Config {
		c := dt.TestConfig()
		c.Clock = clock
		return c
	}
	// storm creates a Deployment of 6 pods on a fresh node; states reports them all failing.
	storm := func(app string) (ns, node string, pods []*corev1.Pod, states func() []dt.ProbeState) {
		ns, node = dt.NewNamespace(), dt.Name(app+"-node")
		dt.RenewLease(node, clock.Now())
		labels := map[string]string{"app": app}
		rs := dt.Deployment(ns, app, 6, labels)
		for i := range 6 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("%s-%d", app, i), node, dt.PodOpts{Owner: rs, Labels: labels}))
		}
		return ns, node, pods, func() []dt.ProbeState {
			var out []dt.ProbeState
			for _, p := range pods {
				out = append(out, dt.Failed(p, "app", 1))
			}
			return out
		}
	}

	It("takes as now the times of a RestartHold a replica 2 h ahead wrote: the next leader's canary goes after the wait, not 2 h later", func() {
		ns, node, pods, states := storm("ahead")
		d := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ahead"}, d)).To(Succeed())
		key := rules.HoldKey{Workload: rules.WorkloadKey{Namespace: ns, Group: "apps", Kind: "Deployment", Name: "ahead"}, Container: "app"}
		ahead := clock.Now().Add(2 * time.Hour)
		// What the replica 2 h ahead wrote when the hold began, on its own clock.
		Expect(k8sClient.Create(ctx, &policyv1alpha1.RestartHold{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: restarthold.HoldRecordName(key), OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: "ahead", UID: d.UID, Controller: ptr.To(false)}}},
			Status: policyv1alpha1.RestartHoldStatus{
				Workload:  policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "ahead"},
				Container: "app", Reason: string(policyv1alpha1.HoldFailureStorm),
				Onset: metav1.NewTime(ahead), WaitStart: metav1.NewTime(ahead),
				Wait: &metav1.Duration{Duration: 30 * time.Second}, NextCanary: ptr.To(metav1.NewTime(ahead.Add(30 * time.Second))),
			},
		})).To(Succeed())
		clamped := clampedTotal("RestartHold")
		hold := dt.RestartHold(ns, "Deployment", "ahead", "app")

		started := clock.Now()
		stop := dt.StartManager(withClock())
		defer stop()
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero(), "the wait has not passed")
		clock.Step(30 * time.Second)
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1), "no canary 30 s after the new leader started")
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1))

		By("the record says when the hold began as the new leader took it, and the clamp is counted")
		Eventually(func() time.Time { return hold().Status.Onset.Time }, dt.Wait, dt.Poll).Should(BeTemporally("~", started, 2*time.Second))
		Expect(clampedTotal("RestartHold") - clamped).To(BeNumerically(">=", 1))
	})

	It("writes back as now an entry of status.recentEvictions 2 h ahead, which then lapses after its window", func() {
		stop := dt.StartManager(withClock())
		defer stop()
		ns := dt.NewNamespace()
		pol := dt.CreatePolicy(ns, "move", nil)
		Eventually(func() int64 { return dt.PolicyStatus(pol)().ObservedGeneration }, dt.Wait, dt.Poll).Should(Equal(pol.Generation))
		clamped := clampedTotal("EnhancedLivenessPolicy")
		started, ahead := clock.Now(), clock.Now().Add(2*time.Hour)
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &policyv1alpha1.EnhancedLivenessPolicy{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pol), got); err != nil {
				return err
			}
			got.Status.RecentEvictions = []policyv1alpha1.RecentEviction{{Pod: "web-x", PodUID: types.UID("uid-web-x"),
				OwnerKind: "ReplicaSet", OwnerName: "web-1", Node: "node-a", Container: "app",
				Time: metav1.NewTime(ahead), Expires: metav1.NewTime(ahead.Add(10 * time.Minute))}}
			return k8sClient.Status().Update(ctx, got)
		})).To(Succeed())
		recent := func() []policyv1alpha1.RecentEviction { return dt.PolicyStatus(pol)().RecentEvictions }
		Eventually(recent, dt.Wait, dt.Poll).Should(ConsistOf(And(
			HaveField("Time.Time", BeTemporally("~", started, 2*time.Second)),
			HaveField("Expires.Time", BeTemporally("~", started.Add(10*time.Minute), 2*time.Second)))),
			"the entry is not written back as now")
		Expect(clampedTotal("EnhancedLivenessPolicy") - clamped).To(BeNumerically(">=", 1))

		By("its window passes: it is dropped, it steers nothing any more")
		clock.Step(10*time.Minute + 2*time.Second)
		Eventually(recent, dt.Wait, dt.Poll).Should(BeEmpty())
	})
})

// clampedTotal reads enhanced_liveness_future_timestamps_clamped_total{object} from the manager's
// registry.
func clampedTotal(object string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "enhanced_liveness_future_timestamps_clamped_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "object" && l.GetValue() == object {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
