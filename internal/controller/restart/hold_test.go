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

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Holds end: soon after a doubt hold begins one held pod is restarted as a canary, and the others
// follow once its new container passes its probe; a budget hold behind unavailability the
// operator is not causing ends within maxHold. The manager's clock is fake; the daemon's heartbeat and
// fresh results are played at its time.
var _ = Describe("Decision controller, bounded holds", Ordered, func() {
	var (
		stop  func()
		clock *clocktesting.FakeClock
	)
	BeforeAll(func() {
		clock = clocktesting.NewFakeClock(time.Now())
		c := dt.TestConfig()
		c.Clock = clock
		stop = dt.StartManager(c)
	})
	AfterAll(func() { stop() })

	It("releases one canary of a FailureStorm hold soon after the onset, then the others when its restart helped; its RestartHold tells each step", func() {
		ns, node := dt.NewNamespace(), dt.Name("hold-node")
		dt.RenewLease(node, clock.Now())
		dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxHold = &metav1.Duration{Duration: time.Minute}
		})
		labels := map[string]string{"app": "held"}
		rs := dt.Deployment(ns, "held", 10, labels)
		var pods []*corev1.Pod
		for i := range 10 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("held-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels}))
		}
		// 8 of 10 failing, more than maxFailing 50%: a storm, and still one after a pod recovers.
		states := func(skip string) []dt.ProbeState {
			var out []dt.ProbeState
			for _, p := range pods[:8] {
				if p.Name != skip {
					out = append(out, dt.Failed(p, "app", 1))
				}
			}
			return out
		}
		onset := clock.Now()
		dt.ReportAt(node, clock.Now(), pods, states("")...)
		Eventually(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).Should(ConsistOf(
			And(ContainSubstring("8 of 10 pods of Deployment/held are failing"),
				MatchRegexp(`one held pod is restarted as canary 1 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(the wait doubles after a canary fails, up to maxHold 1m0s\)`))))
		hold := dt.RestartHold(ns, "Deployment", "held", "app")
		Eventually(hold, dt.Wait, dt.Poll).Should(And(
			HaveField("Status.Reason", string(policyv1alpha1.HoldFailureStorm)),
			HaveField("Status.Workload", policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "held"}),
			HaveField("Status.Onset.Time", BeTemporally("~", onset, time.Second)),
			HaveField("Status.NextCanary.Time", BeTemporally("~", onset.Add(30*time.Second), time.Second)),
			HaveField("Status.Canaries", int32(0))))
		Expect(hold().OwnerReferences).To(ConsistOf(HaveField("Name", "held")))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())

		By("30 s after the onset exactly one held pod is restarted")
		clock.Step(30 * time.Second)
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, states("")...)
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1))
		canaryName := dt.CRRPods(ns)[0]
		Eventually(func() []string { return dt.Events(ns, canaryName) }, dt.Wait, dt.Poll).
			Should(ContainElement(ContainSubstring("the canary of the held restarts of container app of Deployment/held")))
		Eventually(hold, dt.Wait, dt.Poll).Should(And(HaveField("Status.Canaries", int32(1)),
			HaveField("Status.Canary.Pod", canaryName), HaveField("Status.NextCanary", BeNil())))
		var canary *corev1.Pod
		for _, p := range pods {
			if p.Name == canaryName {
				canary = p
			}
		}

		By("the canary's new container passes its probe: the others wait until it has not failed again for 60 s")
		dt.Finish(ns, canary, 2)
		rest := states(canaryName)
		rest = append(rest, dt.Succeeded(canary, "app", 2))
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, rest...)
		// Passing once is not helping yet: the time that judges a restart (60 s for the API's
		// default probe timing) must pass without it failing again.
		Eventually(hold, dt.Wait, dt.Poll).Should(HaveField("Status.ReleasedAt", Not(BeNil())))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1))

		By("60 s on it has not: the others follow within maxUnavailable")
		clock.Step(61 * time.Second)
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, rest...)
		// 7 of 10 still failing: the storm goes on, but the canary's restart helped.
		// maxUnavailable 25% of 10 is 3: three restarts at once.
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(4))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(4))
	})

	It("restarts the held pods past an empty bucket once the canary's restart has stood the time that judges it", func() {
		ns, node := dt.NewNamespace(), dt.Name("proven-node")
		dt.RenewLease(node, clock.Now())
		dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: 1, Burst: 1}
		})
		labels := map[string]string{"app": "proven"}
		rs := dt.Deployment(ns, "proven", 6, labels)
		var pods []*corev1.Pod
		for i := range 6 {
			// Hung and not ready: the budget lets every one go, only the rate limit could hold them.
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("proven-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels, NotReady: true}))
		}
		states := func(passed string) []dt.ProbeState {
			var out []dt.ProbeState
			for _, p := range pods {
				if p.Name == passed {
					out = append(out, dt.Succeeded(p, "app", 2))
				} else {
					out = append(out, dt.Failed(p, "app", 1))
				}
			}
			return out
		}
		report := func(passed string) {
			dt.RenewLease(node, clock.Now())
			dt.ReportAt(node, clock.Now(), pods, states(passed)...)
		}
		report("")
		Eventually(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).ShouldNot(BeEmpty())

		By("30 s on the canary goes, with the bucket's only token")
		clock.Step(30 * time.Second)
		report("")
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		canaryName := dt.CRRPods(ns)[0]
		var canary *corev1.Pod
		for _, p := range pods {
			if p.Name == canaryName {
				canary = p
			}
		}

		By("its new container passes: the others wait until it has not failed again for 60 s")
		dt.Finish(ns, canary, 2)
		report(canaryName)
		Eventually(dt.RestartHold(ns, "Deployment", "proven", "app"), dt.Wait, dt.Poll).Should(HaveField("Status.ReleasedAt", Not(BeNil())))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1))

		By("61 s on it has not: the other 5 go at once, though the bucket holds one token")
		clock.Step(61 * time.Second)
		report(canaryName)
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(6))
		// Events are written by the recorder after the request: wait for them.
		for _, p := range pods {
			if p.Name != canaryName {
				Eventually(func() []string { return dt.Events(ns, p.Name) }, dt.Wait, dt.Poll).Should(ContainElement(ContainSubstring(
					"released past the rate limit: the held restarts of container app of Deployment/proven had a canary that helped")))
			}
		}
	})

	It("holds another namespace's hang in a node storm no longer than its own first wait", func() {
		theirs, ours, node := dt.NewNamespace(), dt.NewNamespace(), dt.Name("storm-node")
		dt.RenewLease(node, clock.Now())
		dt.CreatePolicy(ours, "ours", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxHold = &metav1.Duration{Duration: time.Minute}
		})
		// Three workloads of another namespace fail for good on the node, then our pod hangs: 4
		// of 4 pods in 4 workloads, a node storm.
		var pods []*corev1.Pod
		for i := range 3 {
			pods = append(pods, dt.CreatePod(theirs, fmt.Sprintf("broken-%d", i), node, dt.PodOpts{}))
		}
		mine := dt.CreatePod(ours, "hung", node, dt.PodOpts{})
		pods = append(pods, mine)
		states := func() []dt.ProbeState {
			var out []dt.ProbeState
			for _, p := range pods {
				out = append(out, dt.Failed(p, "app", 1))
			}
			return out
		}
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Eventually(dt.HeldEvents(ours, mine.Name, policyv1alpha1.HoldNodeStorm), dt.Wait, dt.Poll).Should(HaveLen(1))
		Consistently(dt.CRRCount(ours), dt.Quiet, dt.Poll).Should(BeZero())

		By("after its first wait our pod is restarted as its own canary, whatever theirs do")
		clock.Step(30 * time.Second)
		dt.RenewLease(node, clock.Now())
		dt.ReportAt(node, clock.Now(), pods, states()...)
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ours).Should(ConsistOf("hung"))
		// Each of theirs has a canary of its own: at most one restart each.
		Expect(dt.CRRCount(theirs)()).To(BeNumerically("<=", 3))
	})

	// Siblings the operator is not restarting, each of which would hold the budget for ever.
	for _, stuck := range []struct {
		what string
		// make leaves pods[3] unavailable for good, or deletes it (a replica the workload cannot
		// create); it returns the pods the node reports.
		make func(pods []*corev1.Pod) []*corev1.Pod
		why  string
	}{
		{"a Pending pod", func(pods []*corev1.Pod) []*corev1.Pod {
			dt.MakePending(pods[3]) // unschedulable for good
			return pods[:3]
		}, "pods not ready by themselves, Pending or held by choice"},
		{"a sibling that is merely not ready", func(pods []*corev1.Pod) []*corev1.Pod {
			dt.SetRunning(pods[3], 1, false) // its readiness fails on a broken dependency; its liveness passes
			return pods
		}, "pods not ready by themselves, Pending or held by choice"},
		{"a missing replica", func(pods []*corev1.Pod) []*corev1.Pod {
			Expect(k8sClient.Delete(ctx, pods[3], client.GracePeriodSeconds(0))).To(Succeed()) // quota: never created again
			Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(pods[3]), &corev1.Pod{}) }, dt.Wait, dt.Poll).
				Should(Satisfy(apierrors.IsNotFound))
			return pods[:3]
		}, "replicas the workload has not created"},
	} {
		It("ends a budget hold behind "+stuck.what+" within maxHold", func() {
			ns, node := dt.NewNamespace(), dt.Name("budget-node")
			dt.RenewLease(node, clock.Now())
			dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
				s.MaxUnavailable, s.MaxHold = new(intstr.FromInt32(1)), &metav1.Duration{Duration: time.Minute}
			})
			labels := map[string]string{"app": "budget"}
			rs := dt.Deployment(ns, "budget", 4, labels)
			var pods []*corev1.Pod
			for i := range 4 {
				pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("budget-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels}))
			}
			reported := stuck.make(pods)
			dt.ReportAt(node, clock.Now(), reported, dt.Failed(pods[0], "app", 1))
			Eventually(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldMaxUnavailable), dt.Wait, dt.Poll).Should(ConsistOf(
				ContainSubstring("1 of them the operator will not restart (" + stuck.why + "): they stop counting at")))
			Eventually(dt.RestartHold(ns, "Deployment", "budget", "app"), dt.Wait, dt.Poll).Should(
				HaveField("Status.Reason", string(policyv1alpha1.HoldMaxUnavailable)))
			Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())

			By("maxHold later it stops counting: the hang is restarted")
			for range 2 {
				clock.Step(30 * time.Second)
				dt.RenewLease(node, clock.Now())
				dt.ReportAt(node, clock.Now(), reported, dt.Failed(pods[0], "app", 1))
				time.Sleep(100 * time.Millisecond)
			}
			Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf(pods[0].Name))
		})
	}

	for _, skew := range []time.Duration{0, 5 * time.Minute, -5 * time.Minute} {
		It(fmt.Sprintf("holds restarts on a node whose daemon Lease expired, and resumes when it is renewed (node clock %s off)", skew), func() {
			ns, node := dt.NewNamespace(), dt.Name("skew-node")
			// The daemon's clock is skew off the manager's: its renewTime and its results say so.
			nodeNow := func() time.Time { return clock.Now().Add(skew) }
			dt.RenewLease(node, nodeNow())
			pod := dt.CreatePod(ns, "lonely", node, dt.PodOpts{})
			By("renewed, then silent for longer than the Lease's duration on the manager's clock")
			clock.Step(time.Duration(appsv1alpha1.DaemonLeaseDuration+1) * time.Second)
			dt.ReportAt(node, nodeNow(), []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
			Eventually(dt.HeldEvents(ns, pod.Name, policyv1alpha1.HoldDaemonNotReporting), dt.Wait, dt.Poll).Should(ConsistOf(
				ContainSubstring("is not reporting")))
			Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
			By("renewed again: the restart goes through")
			dt.RenewLease(node, nodeNow())
			Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		})
	}

	It("tells a lasting hold again every 5 minutes, lists it in the policy status and measures it", func() {
		ns, node := dt.NewNamespace(), dt.Name("loud-node")
		dt.RenewLease(node, clock.Now())
		zero := intstr.FromInt32(0)
		pol := dt.CreatePolicy(ns, "tight", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxHold = &zero, &metav1.Duration{Duration: time.Minute}
		})
		labels := map[string]string{"app": "loud"}
		rs := dt.Deployment(ns, "loud", 4, labels)
		var pods []*corev1.Pod
		for i := range 4 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("loud-%d", i), node, dt.PodOpts{Owner: rs, Labels: labels}))
		}
		since := clock.Now()
		dt.ReportAt(node, clock.Now(), pods, dt.Failed(pods[0], "app", 1))
		Eventually(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldMaxUnavailable), dt.Wait, dt.Poll).Should(HaveLen(1))
		// The entry says why in the words and numbers of the RestartHeld event.
		why := "0 of 4 pods of Deployment/loud are unavailable, maxUnavailable is 0 (policy " + ns + "/tight)"
		Expect(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldMaxUnavailable)()).To(ConsistOf(ContainSubstring(": " + why + " (probe ")))
		Eventually(func() []policyv1alpha1.HeldPod { return dt.PolicyStatus(pol)().HeldPods }, dt.Wait, dt.Poll).Should(Equal([]policyv1alpha1.HeldPod{{
			Pod: pods[0].Name, Container: "app", Reason: policyv1alpha1.HoldMaxUnavailable, Since: metav1.NewTime(since.Truncate(time.Second)),
			Message: why}}))
		Expect(dt.PolicyStatus(pol)().HeldPodsTotal).To(Equal(int32(1)))
		Eventually(func() float64 {
			return promtestutil.ToFloat64(restart.HeldPods.WithLabelValues(string(policyv1alpha1.HoldMaxUnavailable)))
		},
			dt.Wait, dt.Poll).Should(BeNumerically(">=", 1))

		// The daemon's heartbeat and fresh results every 30 s of the manager's clock, as a real
		// daemon's (a jump of minutes would make the results stale evidence for a moment).
		advance := func(d time.Duration) {
			for range d / (30 * time.Second) {
				clock.Step(30 * time.Second)
				dt.RenewLease(node, clock.Now())
				dt.ReportAt(node, clock.Now(), pods, dt.Failed(pods[0], "app", 1))
				time.Sleep(100 * time.Millisecond)
			}
		}
		By("4 minutes on, a sibling no longer Ready: no new event; 5 minutes on: the hold is told again, with the new numbers")
		dt.SetRunning(pods[3], 1, false)
		advance(4 * time.Minute)
		Consistently(func() []string { return dt.Events(ns, pods[0].Name) }, dt.Quiet, dt.Poll).Should(HaveLen(1))
		advance(time.Minute)
		Eventually(func() []string { return dt.Events(ns, pods[0].Name) }, dt.Wait, dt.Poll).Should(ContainElement(
			HavePrefix("RestartStillHeld: MaxUnavailable: still held after 5m0s: 1 of 4 pods of Deployment/loud are unavailable")))
		Expect(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldMaxUnavailable)()).To(HaveLen(1))
		By("the status entry keeps the onset's message: numbers that move write no status")
		Eventually(func() []policyv1alpha1.WorkloadSummary { return dt.PolicyStatus(pol)().Workloads }, dt.Wait, dt.Poll).Should(
			ConsistOf(HaveField("Unavailable", int32(1))))
		Expect(dt.PolicyStatus(pol)().HeldPods).To(ConsistOf(HaveField("Message", why)))
		Eventually(func() float64 {
			return promtestutil.ToFloat64(restart.OldestHold.WithLabelValues(string(policyv1alpha1.HoldMaxUnavailable)))
		},
			dt.Wait, dt.Poll).Should(BeNumerically(">=", 300))
		Eventually(func() float64 { return promtestutil.ToFloat64(restart.HoldsOverMaxHold) }, dt.Wait, dt.Poll).Should(BeNumerically(">=", 1))
		Expect(dt.CRRCount(ns)()).To(BeZero())
	})
})
