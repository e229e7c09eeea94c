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

package decision

import (
	"fmt"
	"time"

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

const (
	wait = 20 * time.Second
	poll = 25 * time.Millisecond
	// quiet is how long "nothing more happens" is watched for.
	quiet = 2 * time.Second
)

func pct(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

var _ = Describe("Decision controller", Ordered, func() {
	var stop func()
	BeforeAll(func() { stop = startManager(testConfig()) })
	AfterAll(func() { stop() })

	It("restarts one failing pod with a deterministic, labelled request", func() {
		ns, node := newNamespace(), newNode()
		pol := createPolicy(ns, "all", nil)
		pod := createPod(ns, "solo", node, podOpts{})
		requested := promtestutil.ToFloat64(restartsRequested)
		latencies := promtestutil.CollectAndCount(decisionLatency)

		start := time.Now()
		report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		Eventually(crrCount(ns), wait, 5*time.Millisecond).Should(Equal(1))
		GinkgoWriter.Printf("request visible %s after the failure was reported\n", time.Since(start))

		crr := crrs(ns)[0]
		Expect(crr.Name).To(Equal(facts.RequestName(pod, "app", containerID(pod, "app", 1))))
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
			StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: containerID(pod, "app", 1), RestartCount: 0}}}))
		Expect(crr.Spec.Strategy.FailurePolicy).To(Equal(appsv1alpha1.FailurePolicyFail))
		Expect(crr.Spec.Strategy.TerminationGracePeriodSeconds).To(Equal(ptr.To[int64](7)))

		Eventually(func() []string { return events(ns, pod.Name) }, wait, poll).Should(
			ContainElement(And(HavePrefix(EventRestartRequested+": "), ContainSubstring(crr.Name))))
		Expect(promtestutil.ToFloat64(restartsRequested)).To(Equal(requested + 1))
		Expect(promtestutil.CollectAndCount(decisionLatency)).To(Equal(latencies))

		Eventually(policyStatus(pol), wait, poll).Should(And(
			HaveField("ObservedGeneration", pol.Generation),
			HaveField("RestartsRequested", int64(1)),
			HaveField("EnrolledPods", int32(1)),
			HaveField("FailingContainers", int32(1)),
			HaveField("LastRestartTime", Not(BeNil())),
		))
		Expect(meta.IsStatusConditionTrue(policyStatus(pol)().Conditions, policyv1alpha1.ConditionReady)).To(BeTrue())

		By("reporting the same failure again: the deterministic name makes it a no-op")
		report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		Consistently(crrCount(ns), quiet, poll).Should(Equal(1))
	})

	It("restarts a 10-replica Deployment whose probe fails everywhere only up to maxUnavailable, stops at the storm, and recovers by itself", func() {
		// maxUnavailable 25% of 10 rounds up to 3; maxFailing 50% of 10 is 5, and a storm is
		// "more failing than maxFailing": 5 failing pods are not a storm, 6 are.
		ns, node := newNamespace(), newNode()
		pol := createPolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = pct("25%"), pct("50%")
			// The restarted containers fail again at once (a bad probe), which the
			// restart-effectiveness breaker would hold on its own; this spec is about the
			// storm breaker alone (decision_storm_test.go covers the other).
			s.RestartEffectiveness.Mode = policyv1alpha1.BreakerDisabled
		})
		rs := deployment(ns, "web", 10, map[string]string{"app": "web"})
		pods := make([]*corev1.Pod, 10)
		for i := range pods {
			pods[i] = createPod(ns, fmt.Sprintf("web-%d", i), node, podOpts{owner: rs, labels: map[string]string{"app": "web"}})
		}
		gen := map[string]int{}
		for _, p := range pods {
			gen[p.Name] = 1
		}
		states := func(failing map[string]bool) []probeState {
			var out []probeState
			for _, p := range pods {
				if failing[p.Name] {
					out = append(out, failed(p, "app", gen[p.Name]))
				} else {
					out = append(out, succeeded(p, "app", gen[p.Name]))
				}
			}
			return out
		}
		failing := map[string]bool{"web-0": true, "web-1": true, "web-2": true, "web-3": true, "web-4": true}

		By("5 failing: not a storm; exactly 3 restarts, 2 held by maxUnavailable")
		report(node, pods, states(failing)...)
		Eventually(crrCount(ns), wait, poll).Should(Equal(3))
		Consistently(crrCount(ns), quiet, poll).Should(Equal(3))
		restarted := map[string]bool{}
		for _, n := range crrPods(ns) {
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
			Eventually(heldEvents(ns, n, policyv1alpha1.HoldMaxUnavailable), wait, poll).Should(ConsistOf(
				ContainSubstring("3 of 10 pods of Deployment/web are unavailable, maxUnavailable is 3")))
		}

		By("6 failing: a storm; nothing more is restarted")
		failing["web-5"] = true
		heldPods = append(heldPods, "web-5")
		report(node, pods, states(failing)...)
		for _, n := range heldPods {
			Eventually(heldEvents(ns, n, policyv1alpha1.HoldFailureStorm), wait, poll).Should(ConsistOf(
				ContainSubstring("6 of 10 pods of Deployment/web are failing, more than maxFailing 5")))
		}
		Eventually(func() bool {
			return meta.IsStatusConditionTrue(policyStatus(pol)().Conditions, policyv1alpha1.ConditionStormDetected)
		}, wait, poll).Should(BeTrue())
		Eventually(func() []policyv1alpha1.WorkloadSummary { return policyStatus(pol)().Workloads }, wait, poll).Should(ContainElement(
			policyv1alpha1.WorkloadSummary{Workload: policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				DesiredReplicas: 10, Unavailable: 3, FailingPods: 6, HeldReason: "FailureStorm"}))

		By("the 3 restarts finish, the new containers fail too (a bad probe): still a storm, still nothing restarted")
		for n := range restarted {
			for _, p := range pods {
				if p.Name == n {
					gen[n] = 2
					finish(ns, p, 2)
				}
			}
		}
		report(node, pods, states(failing)...)
		Consistently(crrCount(ns), quiet, poll).Should(Equal(3))
		for n := range restarted {
			Eventually(heldEvents(ns, n, policyv1alpha1.HoldFailureStorm), wait, poll).Should(
				ContainElement(ContainSubstring("containerd://" + n + "-app-2")))
		}

		By("failures clear down to 2: the storm ends and the 2 remaining failing pods are restarted")
		failing = map[string]bool{heldPods[0]: true, heldPods[1]: true}
		report(node, pods, states(failing)...)
		Eventually(crrCount(ns), wait, poll).Should(Equal(5))
		Consistently(crrCount(ns), quiet, poll).Should(Equal(5))
		Expect(crrPods(ns)).To(ContainElements(heldPods[0], heldPods[1]))
		Eventually(func() bool {
			return meta.IsStatusConditionFalse(policyStatus(pol)().Conditions, policyv1alpha1.ConditionStormDetected)
		}, wait, poll).Should(BeTrue())
		Eventually(policyStatus(pol), wait, poll).Should(HaveField("RestartsRequested", int64(5)))
		st := policyStatus(pol)()
		Expect(heldCount(st, policyv1alpha1.HoldMaxUnavailable)).To(Equal(int64(2)))
		// 3 held pods + the 3 restarted pods' new containers. One more is possible if the cache
		// shows a request finished before it shows the pod's new container (the old instance is
		// then held once more); never fewer.
		Expect(heldCount(st, policyv1alpha1.HoldFailureStorm)).To(BeNumerically(">=", 6))
		Expect(st.RestartsHeld).To(Equal(heldCount(st, policyv1alpha1.HoldMaxUnavailable) + heldCount(st, policyv1alpha1.HoldFailureStorm)))
	})

	It("restarts nothing when a probe fails on all 10 replicas in the same report", func() {
		ns, node := newNamespace(), newNode()
		pol := createPolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = pct("25%"), pct("50%")
		})
		rs := deployment(ns, "web", 10, map[string]string{"app": "web"})
		var pods []*corev1.Pod
		var states []probeState
		for i := range 10 {
			p := createPod(ns, fmt.Sprintf("web-%d", i), node, podOpts{owner: rs, labels: map[string]string{"app": "web"}})
			pods = append(pods, p)
			states = append(states, failed(p, "app", 1))
		}
		report(node, pods, states...)
		for _, p := range pods {
			Eventually(heldEvents(ns, p.Name, policyv1alpha1.HoldFailureStorm), wait, poll).Should(ConsistOf(
				ContainSubstring("10 of 10 pods of Deployment/web are failing, more than maxFailing 5")))
		}
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())
		Eventually(policyStatus(pol), wait, poll).Should(And(
			HaveField("RestartsRequested", int64(0)), HaveField("RestartsHeld", int64(10)), HaveField("FailingContainers", int32(10))))
	})

	It("restarts no pod admitted in Shadow, and records what it would have done", func() {
		ns, nodeA, nodeB := newNamespace(), newNode(), newNode()
		// Enforce now, and evicting: only the pod's own mode keeps the operator's hands off it.
		pol := createPolicy(ns, "trial", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.RestartEffectiveness = policyv1alpha1.RestartEffectiveness{MinIneffective: 1, Action: policyv1alpha1.IneffectiveEvict}
		})
		labels := map[string]string{"app": "web"}
		rs := deployment(ns, "web", 2, labels)
		pod := createPod(ns, "web-a", nodeA, podOpts{owner: rs, labels: shadowLabels(labels)})
		sibling := createPod(ns, "web-b", nodeB, podOpts{owner: rs, labels: labels})
		held := promtestutil.ToFloat64(restartsHeld.WithLabelValues("Shadow"))
		report(nodeB, []*corev1.Pod{sibling}, succeeded(sibling, "app", 1))
		report(nodeA, []*corev1.Pod{pod}, failed(pod, "app", 1))
		Eventually(heldEvents(ns, pod.Name, policyv1alpha1.HoldShadow), wait, poll).Should(ConsistOf(
			ContainSubstring("would restart container app; the pod was admitted in Shadow mode and keeps it")))
		By("reporting again: no new event, no new count, still no request and no eviction")
		report(nodeA, []*corev1.Pod{pod}, failed(pod, "app", 1))
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		Expect(pod.DeletionTimestamp).To(BeNil(), "the pod was evicted")
		Expect(events(ns, pod.Name)).NotTo(ContainElement(HavePrefix(EventEvicted)))
		Expect(heldEvents(ns, pod.Name, policyv1alpha1.HoldShadow)()).To(HaveLen(1))
		Expect(promtestutil.ToFloat64(restartsHeld.WithLabelValues("Shadow"))).To(Equal(held + 1))
		Eventually(policyStatus(pol), wait, poll).Should(And(HaveField("RestartsHeld", int64(1)), HaveField("RestartsRequested", int64(0)),
			HaveField("EnrolledPods", int32(2)), HaveField("ShadowPods", int32(1))))
		Expect(heldCount(policyStatus(pol)(), policyv1alpha1.HoldShadow)).To(Equal(int64(1)))
	})

	It("keeps restarting a pod admitted in Enforce after its policy turns Shadow, and one 0.1.0 admitted under DryRun", func() {
		ns, node := newNamespace(), newNode()
		pol := createPolicy(ns, "all", nil)
		enforced := createPod(ns, "enforced", node, podOpts{labels: map[string]string{appsv1alpha1.LabelMode: appsv1alpha1.ModeEnforce}})
		old := createPod(ns, "from-0-1-0", node, podOpts{}) // no mode label: its probe was moved in every mode
		setMode := func(m policyv1alpha1.PolicyMode) {
			patch := []byte(fmt.Sprintf(`{"spec":{"mode":%q}}`, m))
			Expect(k8sClient.Patch(ctx, pol, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
			Eventually(policyStatus(pol), wait, poll).Should(HaveField("ObservedGeneration", pol.Generation))
		}
		setMode(policyv1alpha1.ModeShadow)
		report(node, []*corev1.Pod{enforced, old}, failed(enforced, "app", 1))
		Eventually(crrPods, wait, poll).WithArguments(ns).Should(ConsistOf("enforced"))

		setMode(policyv1alpha1.ModeDryRun)
		report(node, []*corev1.Pod{enforced, old}, failed(old, "app", 1))
		Eventually(crrPods, wait, poll).WithArguments(ns).Should(ConsistOf("enforced", "from-0-1-0"))
		Expect(heldEvents(ns, old.Name, policyv1alpha1.HoldShadow)()).To(BeEmpty())
		Expect(heldEvents(ns, old.Name, policyv1alpha1.HoldDryRun)()).To(BeEmpty())
		Expect(policyStatus(pol)().ShadowPods).To(BeZero())
	})

	It("honours the per-pod switch, and restarts once it is removed", func() {
		ns, node := newNamespace(), newNode()
		pod := createPod(ns, "switched", node, podOpts{annotations: map[string]string{appsv1alpha1.AnnotationRestartDisabled: "true"}})
		report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		Eventually(heldEvents(ns, pod.Name, policyv1alpha1.HoldDisabled), wait, poll).Should(ConsistOf(ContainSubstring("restart-disabled=true")))
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())

		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		delete(pod.Annotations, appsv1alpha1.AnnotationRestartDisabled)
		Expect(k8sClient.Update(ctx, pod)).To(Succeed())
		Eventually(crrCount(ns), wait, poll).Should(Equal(1))
	})

	It("never restarts blacklisted workloads, pods or containers", func() {
		ns, node := newNamespace(), newNode()
		createPolicy(ns, "bl", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{
				Workloads:   []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "legacy"}},
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fragile": "true"}},
				Containers:  []string{"sidecar"},
			}
		})
		legacy := createPod(ns, "legacy-0", node, podOpts{owner: deployment(ns, "legacy", 1, map[string]string{"app": "legacy"})})
		fragile := createPod(ns, "fragile", node, podOpts{labels: map[string]string{"fragile": "true"}})
		withSidecar := createPod(ns, "with-sidecar", node, podOpts{containers: []string{"app", "sidecar"}})
		plain := createPod(ns, "plain", node, podOpts{})
		// 4 healthy pods keep the node below the node-storm threshold.
		var healthy []*corev1.Pod
		for i := range 4 {
			healthy = append(healthy, createPod(ns, fmt.Sprintf("healthy-%d", i), node, podOpts{}))
		}
		report(node, append([]*corev1.Pod{legacy, fragile, withSidecar, plain}, healthy...),
			failed(legacy, "app", 1), failed(fragile, "app", 1), failed(withSidecar, "sidecar", 1),
			succeeded(withSidecar, "app", 1), failed(plain, "app", 1))
		Eventually(func() []string { return crrPods(ns) }, wait, poll).Should(ConsistOf("plain"))
		Eventually(heldEvents(ns, "legacy-0", policyv1alpha1.HoldBlacklisted), wait, poll).Should(ConsistOf(ContainSubstring("workload Deployment legacy blacklisted")))
		Eventually(heldEvents(ns, "fragile", policyv1alpha1.HoldBlacklisted), wait, poll).Should(ConsistOf(ContainSubstring("blacklist.podSelector")))
		Eventually(heldEvents(ns, "with-sidecar", policyv1alpha1.HoldBlacklisted), wait, poll).Should(ConsistOf(ContainSubstring("container sidecar blacklisted")))
		Consistently(func() []string { return crrPods(ns) }, quiet, poll).Should(ConsistOf("plain"))
	})

	It("applies the most restrictive of two overlapping policies", func() {
		ns := newNamespace()
		web := createPolicy(ns, "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
			one := intstr.FromInt32(1)
			s.MaxUnavailable, s.MaxFailing = &one, pct("100%")
		})
		all := createPolicy(ns, "all", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = pct("50%"), pct("100%")
		})
		for _, app := range []string{"web", "api"} {
			node := newNode()
			rs := deployment(ns, app, 4, map[string]string{"app": app})
			var pods []*corev1.Pod
			for i := range 4 {
				pods = append(pods, createPod(ns, fmt.Sprintf("%s-%d", app, i), node, podOpts{owner: rs, labels: map[string]string{"app": app}}))
			}
			report(node, pods, failed(pods[0], "app", 1), failed(pods[1], "app", 1), failed(pods[2], "app", 1), succeeded(pods[3], "app", 1))
		}
		// web: both policies, min(1, 50% of 4 = 2) = 1. api: only "all", 2.
		Eventually(crrCount(ns), wait, poll).Should(Equal(3))
		Consistently(crrCount(ns), quiet, poll).Should(Equal(3))
		webRestarts := 0
		for _, n := range crrPods(ns) {
			if n[:3] == "web" {
				webRestarts++
			}
		}
		Expect(webRestarts).To(Equal(1))
		Eventually(policyStatus(web), wait, poll).Should(And(HaveField("RestartsRequested", int64(1)), HaveField("RestartsHeld", int64(2))))
		Eventually(policyStatus(all), wait, poll).Should(And(HaveField("RestartsRequested", int64(3)), HaveField("RestartsHeld", int64(3))))
	})

	It("ignores a stale failure reported for a container that was already replaced", func() {
		ns, node := newNamespace(), newNode()
		pod := createPod(ns, "stale", node, podOpts{})
		setRunning(pod, 2, true)
		report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())
		Expect(events(ns, pod.Name)).To(BeEmpty())
	})

	// A Lease that expired (not renewed for its duration on the manager's clock) holds restarts:
	// "Decision controller, bounded holds" plays it with the node's clock ±5 minutes off.

	It("never restarts on a result taken before the daemon's current start", func() {
		ns, node := newNamespace(), newNode()
		pod := createPod(ns, "old-news", node, podOpts{})
		// The daemon restarted after the result below was taken: its Lease says when.
		restarted := time.Now().Add(3 * time.Second)
		startDaemon(node, restarted)
		report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		Eventually(heldEvents(ns, pod.Name, policyv1alpha1.HoldDaemonNotReporting), wait, poll).Should(ConsistOf(
			ContainSubstring("before the daemon of node " + node + " started")))
		Consistently(crrCount(ns), quiet, poll).Should(BeZero())

		By("the new daemon probes the container and it still fails: that is evidence")
		time.Sleep(time.Until(restarted) + time.Second)
		renewLease(node, time.Now())
		report(node, []*corev1.Pod{pod}, failed(pod, "app", 1))
		Eventually(crrCount(ns), wait, poll).Should(Equal(1))
	})

	It("holds a node where several workloads fail at once (node storm)", func() {
		ns := newNamespace()
		stormy, calm := newNode(), newNode()
		var onStormy, onCalm []*corev1.Pod
		for i := range 4 {
			onStormy = append(onStormy, createPod(ns, fmt.Sprintf("s-%d", i), stormy, podOpts{}))
			onCalm = append(onCalm, createPod(ns, fmt.Sprintf("c-%d", i), calm, podOpts{}))
		}
		// stormy: 3 of 4 pods failing (> 50% = 2) in 3 workloads (>= 3): node storm.
		report(stormy, onStormy, failed(onStormy[0], "app", 1), failed(onStormy[1], "app", 1), failed(onStormy[2], "app", 1), succeeded(onStormy[3], "app", 1))
		// calm: 1 of 4 failing: restarted.
		report(calm, onCalm, failed(onCalm[0], "app", 1))
		Eventually(func() []string { return crrPods(ns) }, wait, poll).Should(ConsistOf("c-0"))
		for _, p := range onStormy[:3] {
			Eventually(heldEvents(ns, p.Name, policyv1alpha1.HoldNodeStorm), wait, poll).Should(ConsistOf(
				ContainSubstring("3 of 4 pods in 3 workloads are failing on node " + stormy)))
		}
		Consistently(func() []string { return crrPods(ns) }, quiet, poll).Should(ConsistOf("c-0"))

		By("two failures clear: the storm is over and the last failing pod is restarted")
		report(stormy, onStormy, failed(onStormy[0], "app", 1))
		Eventually(func() []string { return crrPods(ns) }, wait, poll).Should(ConsistOf("c-0", "s-0"))
	})

	It("restarts several failed containers of one pod one after the other", func() {
		ns, node := newNamespace(), newNode()
		pod := createPod(ns, "multi", node, podOpts{containers: []string{"app", "sidecar"}})
		report(node, []*corev1.Pod{pod}, failed(pod, "app", 1), failed(pod, "sidecar", 1))
		Eventually(crrCount(ns), wait, poll).Should(Equal(1))
		Consistently(crrCount(ns), quiet, poll).Should(Equal(1))
		first := crrs(ns)[0]
		Expect(first.Spec.Containers[0].Name).To(Equal("app"))

		By("the app container runs again under a new ID; the request finishes; the sidecar is next")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		pod.Status.ContainerStatuses[0].ContainerID = containerID(pod, "app", 2)
		pod.Status.ContainerStatuses[0].RestartCount = 1
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
		report(node, []*corev1.Pod{pod}, succeeded(pod, "app", 2), failed(pod, "sidecar", 1))
		Consistently(crrCount(ns), quiet, poll).Should(Equal(1), "the first request has not finished yet")
		first.Status.Phase = appsv1alpha1.RecreateSucceeded
		Expect(k8sClient.Status().Update(ctx, &first)).To(Succeed())
		report(node, []*corev1.Pod{pod}, succeeded(pod, "app", 2), failed(pod, "sidecar", 1))
		Eventually(crrCount(ns), wait, poll).Should(Equal(2))
		var second appsv1alpha1.ContainerRecreateRequest
		for _, c := range crrs(ns) {
			if c.Name != first.Name {
				second = c
			}
		}
		Expect(second.Spec.Containers).To(Equal([]appsv1alpha1.ContainerRecreateRequestContainer{{Name: "sidecar",
			StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: containerID(pod, "sidecar", 1)}}}))
		Expect(second.Annotations).To(HaveKeyWithValue(appsv1alpha1.AnnotationCRRProbe, "multi-sidecar"))
	})
})
