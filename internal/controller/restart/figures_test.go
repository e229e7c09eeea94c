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
	"maps"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// The figures of enrolling: the kubelet's restart moments beside the engine's verdicts, counted
// once per container instance, in both modes.
var _ = Describe("Decision controller, figures of enrolling", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	avoided := func(ns, mode string, reason policyv1alpha1.HoldReason) func() float64 {
		return func() float64 {
			return promtestutil.ToFloat64(restart.RestartsAvoided.WithLabelValues(ns, mode, string(reason)))
		}
	}
	agreed := func(ns, mode string) func() float64 {
		return func() float64 { return promtestutil.ToFloat64(restart.RestartsAgreed.WithLabelValues(ns, mode)) }
	}
	// added returns the count and the sum of the added-time histogram's samples.
	added := func(ns, mode string) (uint64, float64) {
		m := &dto.Metric{}
		Expect(restart.RestartAdded.WithLabelValues(ns, mode).(prometheus.Metric).Write(m)).To(Succeed())
		return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
	}
	// fleet creates a 10-replica Deployment's pods on one node, with extra labels on the pods.
	fleet := func(ns string, extra map[string]string) (string, []*corev1.Pod) {
		node := dt.NewNode()
		labels := map[string]string{"app": "web"}
		rs := dt.Deployment(ns, "web", 10, labels)
		podLabels := maps.Clone(labels)
		maps.Copy(podLabels, extra)
		var pods []*corev1.Pod
		for i := range 10 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("web-%d", i), node, dt.PodOpts{Owner: rs, Labels: podLabels}))
		}
		return node, pods
	}
	enforce, shadow := appsv1alpha1.ModeEnforce, appsv1alpha1.ModeShadow
	storm := policyv1alpha1.HoldFailureStorm
	web := policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	// statusFigures returns the policy's status.figures of its workloads.
	statusFigures := func(pol *policyv1alpha1.EnhancedLivenessPolicy) func() []policyv1alpha1.WorkloadFigures {
		return func() []policyv1alpha1.WorkloadFigures {
			if f := dt.PolicyStatus(pol)().Figures; f != nil {
				return f.Workloads
			}
			return nil
		}
	}

	It("counts a storm held in Enforce as avoided restarts, once per held pod however often it is decided again", func() {
		ns := dt.NewNamespace()
		pol := dt.CreatePolicy(ns, "web", nil) // maxFailing 50%
		node, pods := fleet(ns, nil)
		var states []dt.ProbeState
		for _, p := range pods[:6] {
			states = append(states, dt.Failed(p, "app", 1))
		}
		dt.ReportProbes(node, pods, states...)
		for _, p := range pods[:6] {
			Eventually(dt.HeldEvents(ns, p.Name, storm), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		}
		Eventually(avoided(ns, enforce, storm), dt.Wait, dt.Poll).Should(Equal(6.0))
		// The holds are decided again (every recheck, on every report): still six.
		dt.ReportProbes(node, pods, states...)
		Consistently(avoided(ns, enforce, storm), 2*dt.TestConfig().HoldRecheckInterval, dt.Poll).Should(Equal(6.0))
		Expect(agreed(ns, enforce)()).To(BeZero())
		Expect(dt.CRRCount(ns)()).To(BeZero())
		Eventually(statusFigures(pol), dt.Wait, dt.Poll).Should(Equal([]policyv1alpha1.WorkloadFigures{{Workload: web,
			Mode: enforce, Avoided: 6, AvoidedByReason: []policyv1alpha1.HeldCount{{Reason: storm, Count: 6}}}}))
	})

	It("records the time a single hang's restart came after its threshold, once", func() {
		ns := dt.NewNamespace()
		pol := dt.CreatePolicy(ns, "web", nil)
		node, pods := fleet(ns, nil)
		// The failure reached its threshold 10 s before the decision sees it.
		dt.ReportAt(node, time.Now().Add(-10*time.Second), pods, dt.Failed(pods[0], "app", 1))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf(pods[0].Name))
		Eventually(agreed(ns, enforce), dt.Wait, dt.Poll).Should(Equal(1.0))
		count, sum := added(ns, enforce)
		Expect(count).To(Equal(uint64(1)))
		Expect(sum).To(And(BeNumerically(">=", 9), BeNumerically("<", 10+dt.Wait.Seconds())))
		Consistently(agreed(ns, enforce), dt.Quiet, dt.Poll).Should(Equal(1.0))
		Expect(avoided(ns, enforce, storm)()).To(BeZero())
		Eventually(statusFigures(pol), dt.Wait, dt.Poll).Should(ConsistOf(And(
			HaveField("Workload", web), HaveField("Mode", enforce), HaveField("Agreed", int32(1)),
			HaveField("Avoided", int32(0)), HaveField("AddedSeconds", ConsistOf(BeNumerically(">=", 9))),
			HaveField("AddedMaxSeconds", BeNumerically(">=", 9)))))
	})

	It("counts a budget hold in Enforce as avoided with its reason, once, the restart it lets through later as agreed", func() {
		ns := dt.NewNamespace()
		zero := intstr.FromInt32(0)
		pol := dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.MaxUnavailable = &zero })
		node, pods := fleet(ns, nil)
		dt.ReportProbes(node, pods, dt.Failed(pods[0], "app", 1))
		budget := policyv1alpha1.HoldMaxUnavailable
		Eventually(dt.HeldEvents(ns, pods[0].Name, budget), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		Eventually(avoided(ns, enforce, budget), dt.Wait, dt.Poll).Should(Equal(1.0))
		Consistently(avoided(ns, enforce, budget), 2*dt.TestConfig().HoldRecheckInterval, dt.Poll).Should(Equal(1.0))
		Expect(agreed(ns, enforce)()).To(BeZero())

		By("the budget comes back: the held restart is made, and counted agreed")
		one := intstr.FromInt32(1)
		Eventually(func() error {
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pol), pol); err != nil {
				return err
			}
			pol.Spec.MaxUnavailable = &one
			return k8sClient.Update(ctx, pol)
		}, dt.Wait, dt.Poll).Should(Succeed())
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf(pods[0].Name))
		Eventually(agreed(ns, enforce), dt.Wait, dt.Poll).Should(Equal(1.0))
		Expect(avoided(ns, enforce, budget)()).To(Equal(1.0))
		Eventually(statusFigures(pol), dt.Wait, dt.Poll).Should(ConsistOf(And(HaveField("Mode", enforce),
			HaveField("Avoided", int32(1)), HaveField("Agreed", int32(1)),
			HaveField("AvoidedByReason", Equal([]policyv1alpha1.HeldCount{{Reason: budget, Count: 1}})))))
	})

	It("counts the kubelet's restarts of Shadow pods the engine would have held as avoided, and not a restart it saw no failure of", func() {
		ns := dt.NewNamespace()
		pol := dt.CreatePolicy(ns, "web", nil) // maxFailing 50%
		node, pods := fleet(ns, map[string]string{appsv1alpha1.LabelMode: appsv1alpha1.ModeShadow})
		var states []dt.ProbeState
		for _, p := range pods[:6] {
			states = append(states, dt.Failed(p, "app", 1))
		}
		dt.ReportProbes(node, pods, states...)
		for _, p := range pods[:6] {
			Eventually(dt.HeldEvents(ns, p.Name, policyv1alpha1.HoldShadow), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		}
		// The engine holds; nothing is counted before the kubelet restarts.
		Consistently(avoided(ns, shadow, storm), dt.Quiet, dt.Poll).Should(BeZero())

		By("the kubelet restarts two of the failing containers, and a healthy one that crashed by itself")
		for _, p := range []*corev1.Pod{pods[0], pods[1], pods[9]} {
			dt.SetRunning(p, 2, true)
		}
		Eventually(avoided(ns, shadow, storm), dt.Wait, dt.Poll).Should(Equal(2.0))
		Consistently(avoided(ns, shadow, storm), 2*dt.TestConfig().HoldRecheckInterval, dt.Poll).Should(Equal(2.0))
		Expect(agreed(ns, shadow)()).To(BeZero())
		Expect(dt.CRRCount(ns)()).To(BeZero())
		Eventually(statusFigures(pol), dt.Wait, dt.Poll).Should(Equal([]policyv1alpha1.WorkloadFigures{{Workload: web,
			Mode: shadow, Avoided: 2, AvoidedByReason: []policyv1alpha1.HeldCount{{Reason: storm, Count: 2}}}}))
	})

	It("counts the kubelet's restart of a Shadow pod's single hang as agreed, with the time the engine would have added", func() {
		ns := dt.NewNamespace()
		dt.CreatePolicy(ns, "web", nil)
		node, pods := fleet(ns, map[string]string{appsv1alpha1.LabelMode: appsv1alpha1.ModeShadow})
		dt.ReportAt(node, time.Now().Add(-10*time.Second), pods, dt.Failed(pods[0], "app", 1))
		Eventually(dt.HeldEvents(ns, pods[0].Name, policyv1alpha1.HoldShadow), dt.Wait, dt.Poll).ShouldNot(BeEmpty())
		dt.SetRunning(pods[0], 2, true)
		Eventually(agreed(ns, shadow), dt.Wait, dt.Poll).Should(Equal(1.0))
		count, sum := added(ns, shadow)
		Expect(count).To(Equal(uint64(1)))
		Expect(sum).To(And(BeNumerically(">=", 9), BeNumerically("<", 10+dt.Wait.Seconds())))
		Expect(dt.CRRCount(ns)()).To(BeZero())
	})
})
