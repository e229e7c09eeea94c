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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/facts"
)

var _ = Describe("Decision controller", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = dt.StartManager(dt.TestConfig()) })
	AfterAll(func() { stop() })

	It("restarts one failing pod with a deterministic, labelled request", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pol := dt.CreatePolicy(ns, "all", nil)
		pod := dt.CreatePod(ns, "solo", node, dt.PodOpts{})
		requested := promtestutil.ToFloat64(restart.RestartsRequested)
		latencies := promtestutil.CollectAndCount(restart.DecisionLatency)

		start := time.Now()
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Eventually(dt.CRRCount(ns), dt.Wait, 5*time.Millisecond).Should(Equal(1))
		GinkgoWriter.Printf("request visible %s after the failure was reported\n", time.Since(start))

		crr := dt.CRRs(ns)[0]
		Expect(crr.Name).To(Equal(facts.RequestName(pod, "app", dt.ContainerID(pod, "app", 1))))
		Expect(crr.Name).To(HavePrefix("solo-app-"))
		Expect(crr.Labels).To(Equal(map[string]string{
			appsv1alpha1.LabelCRRPodUID: string(pod.UID), appsv1alpha1.LabelCRRNodeName: node,
			appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByDecisionController,
		}))
		Expect(crr.Annotations).To(HaveKeyWithValue(appsv1alpha1.AnnotationCRRProbe, "solo-app"))
		Expect(crr.OwnerReferences).To(ConsistOf(metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name,
			UID: pod.UID, Controller: ptr.To(false), BlockOwnerDeletion: ptr.To(false)}))
		Expect(crr.Spec.PodName).To(Equal(pod.Name))
		Expect(crr.Spec.Containers).To(Equal([]appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app",
			StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: dt.ContainerID(pod, "app", 1), RestartCount: 0}}}))
		Expect(crr.Spec.Strategy.FailurePolicy).To(Equal(appsv1alpha1.FailurePolicyFail))
		Expect(crr.Spec.Strategy.TerminationGracePeriodSeconds).To(Equal(ptr.To[int64](7)))

		Eventually(func() []string { return dt.Events(ns, pod.Name) }, dt.Wait, dt.Poll).Should(
			ContainElement(And(HavePrefix(restart.EventRestartRequested+": "), ContainSubstring(crr.Name))))
		Expect(promtestutil.ToFloat64(restart.RestartsRequested)).To(Equal(requested + 1))
		Expect(promtestutil.CollectAndCount(restart.DecisionLatency)).To(Equal(latencies))

		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(And(
			HaveField("ObservedGeneration", pol.Generation),
			HaveField("RestartsRequested", int64(1)),
			HaveField("EnrolledPods", int32(1)),
			HaveField("FailingContainers", int32(1)),
			HaveField("LastRestartTime", Not(BeNil())),
		))
		Expect(meta.IsStatusConditionTrue(dt.PolicyStatus(pol)().Conditions, policyv1alpha1.ConditionReady)).To(BeTrue())

		By("reporting the same failure again: the deterministic name makes it a no-op")
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1))
	})

	It("restarts a 10-replica Deployment whose probe fails everywhere only up to maxUnavailable, stops at the storm, and recovers by itself", func() {
		// maxUnavailable 25% of 10 rounds up to 3; maxFailing 50% of 10 is 5, and a storm is
		// "more failing than maxFailing": 5 failing pods are not a storm, 6 are.
		ns, node := dt.NewNamespace(), dt.NewNode()
		pol := dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = dt.Pct("25%"), dt.Pct("50%")
			// The restarted containers fail again at once (a bad probe), which the
			// restart-effectiveness breaker would hold on its own; this spec is about the
			// storm breaker alone (storm_test.go covers the other).
			s.RestartEffectiveness.Mode = policyv1alpha1.BreakerDisabled
		})
		rs := dt.Deployment(ns, "web", 10, map[string]string{"app": "web"})
		pods := make([]*corev1.Pod, 10)
		for i := range pods {
			pods[i] = dt.CreatePod(ns, fmt.Sprintf("web-%d", i), node, dt.PodOpts{Owner: rs, Labels: map[string]string{"app": "web"}})
		}
		gen := map[string]int{}
		for _, p := range pods {
			gen[p.Name] = 1
		}
		states := func(failing map[string]bool) []dt.ProbeState {
			var out []dt.ProbeState
			for _, p := range pods {
				if failing[p.Name] {
					out = append(out, dt.Failed(p, "app", gen[p.Name]))
				} else {
					out = append(out, dt.Succeeded(p, "app", gen[p.Name]))
				}
			}
			return out
		}
		failing := map[string]bool{"web-0": true, "web-1": true, "web-2": true, "web-3": true, "web-4": true}

		By("5 failing: not a storm; exactly 3 restarts, 2 held by maxUnavailable")
		dt.ReportProbes(node, pods, states(failing)...)
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(3))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(3))
		restarted := map[string]bool{}
		for _, n := range dt.CRRPods(ns) {
			restarted[n] = true
		}
		var heldPods []string
		for n := range failing {
			if !restarted[n] {
				heldPods = append(heldPods, n)
			}
		}
		Expect(heldPods).To(HaveLen(2))
		for _, n := range heldPods {
			Eventually(dt.HeldEvents(ns, n, policyv1alpha1.HoldMaxUnavailable), dt.Wait, dt.Poll).Should(ConsistOf(
				ContainSubstring("3 of 10 pods of Deployment/web are unavailable, maxUnavailable is 3")))
		}

		By("6 failing: a storm; nothing more is restarted")
		failing["web-5"] = true
		heldPods = append(heldPods, "web-5")
		dt.ReportProbes(node, pods, states(failing)...)
		for _, n := range heldPods {
			Eventually(dt.HeldEvents(ns, n, policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).Should(ConsistOf(
				ContainSubstring("6 of 10 pods of Deployment/web are failing, more than maxFailing 5")))
		}
		Eventually(func() bool {
			return meta.IsStatusConditionTrue(dt.PolicyStatus(pol)().Conditions, policyv1alpha1.ConditionStormDetected)
		}, dt.Wait, dt.Poll).Should(BeTrue())
		Eventually(func() []policyv1alpha1.WorkloadSummary { return dt.PolicyStatus(pol)().Workloads }, dt.Wait, dt.Poll).Should(ContainElement(
			policyv1alpha1.WorkloadSummary{Workload: policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				DesiredReplicas: 10, Unavailable: 3, FailingPods: 6, HeldReason: "FailureStorm"}))

		By("the 3 restarts finish, the new containers fail too (a bad probe): still a storm, still nothing restarted")
		for n := range restarted {
			for _, p := range pods {
				if p.Name == n {
					gen[n] = 2
					dt.Finish(ns, p, 2)
				}
			}
		}
		dt.ReportProbes(node, pods, states(failing)...)
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(3))
		for n := range restarted {
			Eventually(dt.HeldEvents(ns, n, policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).Should(
				ContainElement(ContainSubstring("containerd://" + n + "-app-2")))
		}

		By("failures clear down to 2: the storm ends and the 2 remaining failing pods are restarted")
		failing = map[string]bool{heldPods[0]: true, heldPods[1]: true}
		dt.ReportProbes(node, pods, states(failing)...)
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(5))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(5))
		Expect(dt.CRRPods(ns)).To(ContainElements(heldPods[0], heldPods[1]))
		Eventually(func() bool {
			return meta.IsStatusConditionFalse(dt.PolicyStatus(pol)().Conditions, policyv1alpha1.ConditionStormDetected)
		}, dt.Wait, dt.Poll).Should(BeTrue())
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(HaveField("RestartsRequested", int64(5)))
		st := dt.PolicyStatus(pol)()
		Expect(dt.HeldCount(st, policyv1alpha1.HoldMaxUnavailable)).To(Equal(int64(2)))
		// 3 held pods + the 3 restarted pods' new containers. One more is possible if the cache
		// shows a request finished before it shows the pod's new container (the old instance is
		// then held once more); never fewer.
		Expect(dt.HeldCount(st, policyv1alpha1.HoldFailureStorm)).To(BeNumerically(">=", 6))
		Expect(st.RestartsHeld).To(Equal(dt.HeldCount(st, policyv1alpha1.HoldMaxUnavailable) + dt.HeldCount(st, policyv1alpha1.HoldFailureStorm)))
	})

	It("restarts nothing when a probe fails on all 10 replicas in the same report", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pol := dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = dt.Pct("25%"), dt.Pct("50%")
		})
		rs := dt.Deployment(ns, "web", 10, map[string]string{"app": "web"})
		var pods []*corev1.Pod
		var states []dt.ProbeState
		for i := range 10 {
			p := dt.CreatePod(ns, fmt.Sprintf("web-%d", i), node, dt.PodOpts{Owner: rs, Labels: map[string]string{"app": "web"}})
			pods = append(pods, p)
			states = append(states, dt.Failed(p, "app", 1))
		}
		dt.ReportProbes(node, pods, states...)
		for _, p := range pods {
			Eventually(dt.HeldEvents(ns, p.Name, policyv1alpha1.HoldFailureStorm), dt.Wait, dt.Poll).Should(ConsistOf(
				ContainSubstring("10 of 10 pods of Deployment/web are failing, more than maxFailing 5")))
		}
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(And(
			HaveField("RestartsRequested", int64(0)), HaveField("RestartsHeld", int64(10)), HaveField("FailingContainers", int32(10))))
	})

	It("restarts no pod admitted in Shadow, and records what it would have done", func() {
		ns, nodeA, nodeB := dt.NewNamespace(), dt.NewNode(), dt.NewNode()
		// Enforce now, and evicting: only the pod's own mode keeps the operator's hands off it.
		pol := dt.CreatePolicy(ns, "trial", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.RestartEffectiveness = policyv1alpha1.RestartEffectiveness{MinIneffective: 1, Action: policyv1alpha1.IneffectiveEvict}
		})
		labels := map[string]string{"app": "web"}
		rs := dt.Deployment(ns, "web", 2, labels)
		pod := dt.CreatePod(ns, "web-a", nodeA, dt.PodOpts{Owner: rs, Labels: dt.ShadowLabels(labels)})
		sibling := dt.CreatePod(ns, "web-b", nodeB, dt.PodOpts{Owner: rs, Labels: labels})
		held := promtestutil.ToFloat64(restart.RestartsHeld.WithLabelValues("Shadow"))
		dt.ReportProbes(nodeB, []*corev1.Pod{sibling}, dt.Succeeded(sibling, "app", 1))
		dt.ReportProbes(nodeA, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Eventually(dt.HeldEvents(ns, pod.Name, policyv1alpha1.HoldShadow), dt.Wait, dt.Poll).Should(ConsistOf(
			ContainSubstring("would restart container app; the pod was admitted in Shadow mode and keeps it")))
		By("reporting again: no new event, no new count, still no request and no eviction")
		dt.ReportProbes(nodeA, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		Expect(pod.DeletionTimestamp).To(BeNil(), "the pod was evicted")
		Expect(dt.Events(ns, pod.Name)).NotTo(ContainElement(HavePrefix(restart.EventEvicted)))
		Expect(dt.HeldEvents(ns, pod.Name, policyv1alpha1.HoldShadow)()).To(HaveLen(1))
		Expect(promtestutil.ToFloat64(restart.RestartsHeld.WithLabelValues("Shadow"))).To(Equal(held + 1))
		Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(And(HaveField("RestartsHeld", int64(1)), HaveField("RestartsRequested", int64(0)),
			HaveField("EnrolledPods", int32(2)), HaveField("ShadowPods", int32(1))))
		Expect(dt.HeldCount(dt.PolicyStatus(pol)(), policyv1alpha1.HoldShadow)).To(Equal(int64(1)))
	})

	It("keeps restarting a pod admitted in Enforce after its policy turns Shadow, and one 0.1.0 admitted under DryRun", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pol := dt.CreatePolicy(ns, "all", nil)
		enforced := dt.CreatePod(ns, "enforced", node, dt.PodOpts{Labels: map[string]string{appsv1alpha1.LabelMode: appsv1alpha1.ModeEnforce}})
		old := dt.CreatePod(ns, "from-0-1-0", node, dt.PodOpts{}) // no mode label: its probe was moved in every mode
		setMode := func(m policyv1alpha1.PolicyMode) {
			patch := []byte(fmt.Sprintf(`{"spec":{"mode":%q}}`, m))
			Expect(k8sClient.Patch(ctx, pol, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
			Eventually(dt.PolicyStatus(pol), dt.Wait, dt.Poll).Should(HaveField("ObservedGeneration", pol.Generation))
		}
		setMode(policyv1alpha1.ModeShadow)
		dt.ReportProbes(node, []*corev1.Pod{enforced, old}, dt.Failed(enforced, "app", 1))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("enforced"))

		setMode(policyv1alpha1.ModeDryRun)
		dt.ReportProbes(node, []*corev1.Pod{enforced, old}, dt.Failed(old, "app", 1))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(ns).Should(ConsistOf("enforced", "from-0-1-0"))
		Expect(dt.HeldEvents(ns, old.Name, policyv1alpha1.HoldShadow)()).To(BeEmpty())
		Expect(dt.HeldEvents(ns, old.Name, policyv1alpha1.HoldDryRun)()).To(BeEmpty())
		Expect(dt.PolicyStatus(pol)().ShadowPods).To(BeZero())
	})

	It("honours the per-pod switch, and restarts once it is removed", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pod := dt.CreatePod(ns, "switched", node, dt.PodOpts{Annotations: map[string]string{appsv1alpha1.AnnotationRestartDisabled: "true"}})
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Eventually(dt.HeldEvents(ns, pod.Name, policyv1alpha1.HoldDisabled), dt.Wait, dt.Poll).Should(ConsistOf(ContainSubstring("restart-disabled=true")))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())

		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		delete(pod.Annotations, appsv1alpha1.AnnotationRestartDisabled)
		Expect(k8sClient.Update(ctx, pod)).To(Succeed())
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
	})

	It("never restarts blacklisted workloads, pods or containers", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		dt.CreatePolicy(ns, "bl", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{
				Workloads:   []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "legacy"}},
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fragile": "true"}},
				Containers:  []string{"sidecar"},
			}
		})
		legacy := dt.CreatePod(ns, "legacy-0", node, dt.PodOpts{Owner: dt.Deployment(ns, "legacy", 1, map[string]string{"app": "legacy"})})
		fragile := dt.CreatePod(ns, "fragile", node, dt.PodOpts{Labels: map[string]string{"fragile": "true"}})
		withSidecar := dt.CreatePod(ns, "with-sidecar", node, dt.PodOpts{Containers: []string{"app", "sidecar"}})
		plain := dt.CreatePod(ns, "plain", node, dt.PodOpts{})
		// 4 healthy pods keep the node below the node-storm threshold.
		var healthy []*corev1.Pod
		for i := range 4 {
			healthy = append(healthy, dt.CreatePod(ns, fmt.Sprintf("healthy-%d", i), node, dt.PodOpts{}))
		}
		dt.ReportProbes(node, append([]*corev1.Pod{legacy, fragile, withSidecar, plain}, healthy...),
			dt.Failed(legacy, "app", 1), dt.Failed(fragile, "app", 1), dt.Failed(withSidecar, "sidecar", 1),
			dt.Succeeded(withSidecar, "app", 1), dt.Failed(plain, "app", 1))
		Eventually(func() []string { return dt.CRRPods(ns) }, dt.Wait, dt.Poll).Should(ConsistOf("plain"))
		Eventually(dt.HeldEvents(ns, "legacy-0", policyv1alpha1.HoldBlacklisted), dt.Wait, dt.Poll).Should(ConsistOf(ContainSubstring("workload Deployment legacy blacklisted")))
		Eventually(dt.HeldEvents(ns, "fragile", policyv1alpha1.HoldBlacklisted), dt.Wait, dt.Poll).Should(ConsistOf(ContainSubstring("blacklist.podSelector")))
		Eventually(dt.HeldEvents(ns, "with-sidecar", policyv1alpha1.HoldBlacklisted), dt.Wait, dt.Poll).Should(ConsistOf(ContainSubstring("container sidecar blacklisted")))
		Consistently(func() []string { return dt.CRRPods(ns) }, dt.Quiet, dt.Poll).Should(ConsistOf("plain"))
	})

	It("applies the most restrictive of two overlapping policies", func() {
		ns := dt.NewNamespace()
		web := dt.CreatePolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
			one := intstr.FromInt32(1)
			s.MaxUnavailable, s.MaxFailing = &one, dt.Pct("100%")
		})
		all := dt.CreatePolicy(ns, "all", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = dt.Pct("50%"), dt.Pct("100%")
		})
		for _, app := range []string{"web", "api"} {
			node := dt.NewNode()
			rs := dt.Deployment(ns, app, 4, map[string]string{"app": app})
			var pods []*corev1.Pod
			for i := range 4 {
				pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("%s-%d", app, i), node, dt.PodOpts{Owner: rs, Labels: map[string]string{"app": app}}))
			}
			dt.ReportProbes(node, pods, dt.Failed(pods[0], "app", 1), dt.Failed(pods[1], "app", 1), dt.Failed(pods[2], "app", 1), dt.Succeeded(pods[3], "app", 1))
		}
		// web: both policies, min(1, 50% of 4 = 2) = 1. api: only "all", 2.
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(3))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(3))
		webRestarts := 0
		for _, n := range dt.CRRPods(ns) {
			if n[:3] == "web" {
				webRestarts++
			}
		}
		Expect(webRestarts).To(Equal(1))
		Eventually(dt.PolicyStatus(web), dt.Wait, dt.Poll).Should(And(HaveField("RestartsRequested", int64(1)), HaveField("RestartsHeld", int64(2))))
		Eventually(dt.PolicyStatus(all), dt.Wait, dt.Poll).Should(And(HaveField("RestartsRequested", int64(3)), HaveField("RestartsHeld", int64(3))))
	})

	It("ignores a stale failure reported for a container that was already replaced", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pod := dt.CreatePod(ns, "stale", node, dt.PodOpts{})
		dt.SetRunning(pod, 2, true)
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())
		Expect(dt.Events(ns, pod.Name)).To(BeEmpty())
	})

	// A Lease that expired (not renewed for its duration on the manager's clock) holds restarts:
	// "Decision controller, bounded holds" plays it with the node's clock ±5 minutes off.

	It("never restarts on a result taken before the daemon's current start", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pod := dt.CreatePod(ns, "old-news", node, dt.PodOpts{})
		// The daemon restarted after the result below was taken: its Lease says when.
		restarted := time.Now().Add(3 * time.Second)
		dt.StartDaemon(node, restarted)
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Eventually(dt.HeldEvents(ns, pod.Name, policyv1alpha1.HoldDaemonNotReporting), dt.Wait, dt.Poll).Should(ConsistOf(
			ContainSubstring("before the daemon of node " + node + " started")))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(BeZero())

		By("the new daemon probes the container and it still fails: that is evidence")
		time.Sleep(time.Until(restarted) + time.Second)
		dt.RenewLease(node, time.Now())
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1))
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
	})

	It("holds a node where several workloads fail at once (node storm)", func() {
		ns := dt.NewNamespace()
		stormy, calm := dt.NewNode(), dt.NewNode()
		var onStormy, onCalm []*corev1.Pod
		for i := range 4 {
			onStormy = append(onStormy, dt.CreatePod(ns, fmt.Sprintf("s-%d", i), stormy, dt.PodOpts{}))
			onCalm = append(onCalm, dt.CreatePod(ns, fmt.Sprintf("c-%d", i), calm, dt.PodOpts{}))
		}
		// stormy: 3 of 4 pods failing (> 50% = 2) in 3 workloads (>= 3): node storm.
		dt.ReportProbes(stormy, onStormy, dt.Failed(onStormy[0], "app", 1), dt.Failed(onStormy[1], "app", 1), dt.Failed(onStormy[2], "app", 1), dt.Succeeded(onStormy[3], "app", 1))
		// calm: 1 of 4 failing: restarted.
		dt.ReportProbes(calm, onCalm, dt.Failed(onCalm[0], "app", 1))
		Eventually(func() []string { return dt.CRRPods(ns) }, dt.Wait, dt.Poll).Should(ConsistOf("c-0"))
		for _, p := range onStormy[:3] {
			Eventually(dt.HeldEvents(ns, p.Name, policyv1alpha1.HoldNodeStorm), dt.Wait, dt.Poll).Should(ConsistOf(
				ContainSubstring("3 of 4 pods in 3 workloads are failing on node " + stormy)))
		}
		Consistently(func() []string { return dt.CRRPods(ns) }, dt.Quiet, dt.Poll).Should(ConsistOf("c-0"))

		By("two failures clear: the storm is over and the last failing pod is restarted")
		dt.ReportProbes(stormy, onStormy, dt.Failed(onStormy[0], "app", 1))
		Eventually(func() []string { return dt.CRRPods(ns) }, dt.Wait, dt.Poll).Should(ConsistOf("c-0", "s-0"))
	})

	It("restarts several failed containers of one pod one after the other", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		pod := dt.CreatePod(ns, "multi", node, dt.PodOpts{Containers: []string{"app", "sidecar"}})
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Failed(pod, "app", 1), dt.Failed(pod, "sidecar", 1))
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1))
		first := dt.CRRs(ns)[0]
		Expect(first.Spec.Containers[0].Name).To(Equal("app"))

		By("the app container runs again under a new ID; the request finishes; the sidecar is next")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		pod.Status.ContainerStatuses[0].ContainerID = dt.ContainerID(pod, "app", 2)
		pod.Status.ContainerStatuses[0].RestartCount = 1
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Succeeded(pod, "app", 2), dt.Failed(pod, "sidecar", 1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1), "the first request has not finished yet")
		first.Status.Phase = appsv1alpha1.RecreateSucceeded
		Expect(k8sClient.Status().Update(ctx, &first)).To(Succeed())
		dt.ReportProbes(node, []*corev1.Pod{pod}, dt.Succeeded(pod, "app", 2), dt.Failed(pod, "sidecar", 1))
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(2))
		var second appsv1alpha1.ContainerRecreateRequest
		for _, c := range dt.CRRs(ns) {
			if c.Name != first.Name {
				second = c
			}
		}
		Expect(second.Spec.Containers).To(Equal([]appsv1alpha1.ContainerRecreateRequestContainer{{Name: "sidecar",
			StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: dt.ContainerID(pod, "sidecar", 1)}}}))
		Expect(second.Annotations).To(HaveKeyWithValue(appsv1alpha1.AnnotationCRRProbe, "multi-sidecar"))
	})
})
