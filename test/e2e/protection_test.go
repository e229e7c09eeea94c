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
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Scenarios 3 and 4 of the e2e issue: what the policy holds back.

func createPolicy(ns string, spec policyv1alpha1.EnhancedLivenessPolicySpec) *policyv1alpha1.EnhancedLivenessPolicy {
	p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Name: "policy", Namespace: ns}, Spec: spec}
	Expect(k8s.Create(context.Background(), p)).To(Succeed())
	return p
}

func stormCondition(p *policyv1alpha1.EnhancedLivenessPolicy) func() metav1.ConditionStatus {
	return func() metav1.ConditionStatus {
		Expect(k8s.Get(context.Background(), clientKey(p), p)).To(Succeed())
		if c := meta.FindStatusCondition(p.Status.Conditions, policyv1alpha1.ConditionStormDetected); c != nil {
			return c.Status
		}
		return ""
	}
}

var _ = Describe("a policy in Shadow mode (scenario 4)", Label(olmSmoke), func() {
	It("leaves liveness to the kubelet: the pod keeps its native probe and is enrolled beside it, and no request is made", func() {
		ns := newNamespace("shadow")
		pol := createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{Mode: policyv1alpha1.ModeShadow})
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true})
		metrics := leaderScraper(ns)
		pod := onlyPod(ns, "web")
		Expect(pod.Spec.Containers[0].LivenessProbe).NotTo(BeNil(), "Shadow keeps the native probe: the kubelet stays in charge")
		Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelMode, appsv1alpha1.ModeShadow), "the pod's admitted mode")
		Expect(pod.Annotations).To(HaveKey(appsv1alpha1.AnnotationProbeContext), "enrolled beside the kubelet: the daemon probes it too")
		setSick(pod, true)

		// Whether the decision sees the failure before the kubelet's restart makes it stale is a
		// race between two probers; the Shadow hold's event is proven in the decision's envtest.
		By("the kubelet restarts the container, as without the operator")
		Eventually(restartCount(ns, pod.Name)).WithTimeout(60 * time.Second).Should(BeNumerically(">=", 1))
		By("and the operator never makes a request for it")
		Consistently(func() []appsv1alpha1.ContainerRecreateRequest { return crrsIn(ns) }).
			WithTimeout(10 * time.Second).Should(BeEmpty())

		By("the policy's figures say the engine would have restarted it too (agreed), and how much later")
		var fig policyv1alpha1.WorkloadFigures
		Eventually(func(g Gomega) {
			fig = workloadFigures(pol, "web", appsv1alpha1.ModeShadow)
			g.Expect(fig.Agreed).To(BeNumerically(">=", 1), "status.figures: %+v", fig)
			g.Expect(fig.AddedSeconds).To(HaveLen(int(fig.Agreed)))
		}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Succeed())
		Expect(fig.Avoided).To(BeZero(), "a single hang is no reason to hold: %+v", fig)
		// The kubelet restarted once: the engine was at most its reaction time late (the
		// daemon's report and the decision), never a hold's.
		Expect(fig.AddedMaxSeconds).To(BeNumerically("<=", 10), "%+v", fig)
		Eventually(func(g Gomega) {
			m := figureMetricsOf(metrics(), ns, appsv1alpha1.ModeShadow)
			g.Expect(m.agreed).To(BeNumerically(">=", float64(fig.Agreed)), "the leader's counter")
			g.Expect(m.addedCount).To(Equal(m.agreed), "one added time per agreed restart")
			g.Expect(m.avoided).To(BeZero())
		}).WithTimeout(30 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
		appendStormReport("a single hang in Shadow: the kubelet restarted it %d times; the engine would have: %s",
			restartCount(ns, pod.Name)(), describeFigures(fig))
	})
})

var _ = Describe("a probe failing on all 6 replicas of a Deployment (scenario 3)", Label(olmSmoke), func() {
	It("keeps restarts within maxUnavailable, then the storm breaker holds them all until health returns", func() {
		ns := newNamespace("storm")
		const maxUnavailable = 1
		pol := createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(maxUnavailable)),
			MaxFailing:     ptr.To(intstr.FromString("50%")), // 3 of 6
			RateLimit:      policyv1alpha1.RateLimit{RestartsPerMinute: 120, Burst: 20},
			// The sickness survives restarts, which the restart-effectiveness breaker would hold
			// on its own; this scenario is about maxUnavailable and the storm breaker (the
			// other breaker has its own scenario in storm_test.go).
			RestartEffectiveness: policyv1alpha1.RestartEffectiveness{Mode: policyv1alpha1.BreakerDisabled},
		})
		deployApp(ns, app{name: "fleet", replicas: 6, probe: httpProbe(), enrolled: true, stickySickness: true})
		pods := appPods(ns, "fleet")

		// Watch the CRRs all along: how many are in flight at once, and when each was created.
		var mu sync.Mutex
		maxInFlight, created := 0, map[string]time.Time{}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				var list appsv1alpha1.ContainerRecreateRequestList
				if err := k8s.List(context.Background(), &list, clientInNamespace(ns)); err != nil {
					continue
				}
				inFlight := 0
				mu.Lock()
				for _, c := range list.Items {
					if _, seen := created[c.Name]; !seen {
						created[c.Name] = time.Now()
					}
					if c.Status.Phase != appsv1alpha1.RecreateSucceeded && c.Status.Phase != appsv1alpha1.RecreateFailed {
						inFlight++
					}
				}
				maxInFlight = max(maxInFlight, inFlight)
				mu.Unlock()
			}
		}()
		DeferCleanup(func() { close(stop); <-done })
		crrCount := func() int { mu.Lock(); defer mu.Unlock(); return len(created) }

		By("3 of 6 replicas fail (not a storm yet): they are restarted, at most maxUnavailable at a time")
		for _, p := range pods[:3] {
			setSick(p, true)
		}
		Eventually(crrCount).WithTimeout(90 * time.Second).Should(BeNumerically(">=", 3))
		Expect(stormCondition(pol)()).NotTo(Equal(metav1.ConditionTrue))

		By("all 6 fail: the storm breaker trips (condition and Warning event on the policy)")
		for _, p := range pods[3:] {
			setSick(p, true)
		}
		Eventually(stormCondition(pol)).WithTimeout(60 * time.Second).Should(Equal(metav1.ConditionTrue))
		Eventually(hasEvent(ns, pol.Name, "FailureStorm", "", "")).WithTimeout(30 * time.Second).Should(BeTrue())
		Eventually(hasEvent(ns, pods[5].Name, "RestartHeld", "", "FailureStorm")).
			WithTimeout(30 * time.Second).Should(BeTrue())

		By("while the storm lasts, no new restart is requested before the hold's first canary, 30 s after its onset")
		time.Sleep(3 * time.Second) // requests made just before the trip finish
		held := crrCount()
		var hold *policyv1alpha1.RestartHold
		Eventually(func() *policyv1alpha1.RestartHold { hold = restartHoldOf(ns, "fleet", appContainer); return hold }).
			WithTimeout(10 * time.Second).ShouldNot(BeNil())
		Expect(hold.Status.Reason).To(Equal(string(policyv1alpha1.HoldFailureStorm)))
		if hold.Status.NextCanary != nil {
			Expect(hold.Status.NextCanary.Time).To(BeTemporally("~", hold.Status.Onset.Add(30*time.Second), time.Second))
			if quiet := min(15*time.Second, time.Until(hold.Status.NextCanary.Time)-time.Second); quiet > 0 {
				Consistently(crrCount).WithTimeout(quiet).Should(Equal(held))
			}
		}
		held = crrCount()

		By("health restored: the hold clears and no further restarts happen")
		for _, p := range appPods(ns, "fleet") {
			setSick(p, false)
		}
		Eventually(stormCondition(pol)).WithTimeout(90 * time.Second).Should(Equal(metav1.ConditionFalse))
		Consistently(crrCount).WithTimeout(10 * time.Second).Should(Equal(held))

		mu.Lock()
		defer mu.Unlock()
		GinkgoWriter.Printf("storm: %d CRRs in total, at most %d in flight at once\n", len(created), maxInFlight)
		Expect(maxInFlight).To(BeNumerically("<=", maxUnavailable), "restarts in flight beyond maxUnavailable")
	})
})
