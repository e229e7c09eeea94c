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
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// A storm seen before the first restart, and restarts that do not help, side by side
// with the same Deployment left to the kubelet.

func policyCondition(p *policyv1alpha1.EnhancedLivenessPolicy, t string) func() metav1.ConditionStatus {
	return func() metav1.ConditionStatus {
		Expect(k8s.Get(context.Background(), clientKey(p), p)).To(Succeed())
		if c := meta.FindStatusCondition(p.Status.Conditions, t); c != nil {
			return c.Status
		}
		return ""
	}
}

// appendStormReport adds a line to bin/e2e-report/storms.txt (printed by .ci/run).
func appendStormReport(format string, args ...any) {
	f, err := os.OpenFile(filepath.Join(reportDir, "storms.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	_, _ = fmt.Fprintf(f, "%s "+format+"\n", append([]any{time.Now().UTC().Format(time.RFC3339)}, args...)...)
}

// heldPods counts the app's running pods with a RestartHeld event for one of the reasons.
func heldPods(ns, name string, reasons ...string) int {
	n := 0
	for _, p := range appPods(ns, name) {
		for _, r := range reasons {
			if hasEvent(ns, p.Name, "RestartHeld", "", r+":")() {
				n++
				break
			}
		}
	}
	return n
}

// rollOutProbePath changes the liveness probe's path in the Deployment's template and waits until
// the rollout has replaced every pod.
func rollOutProbePath(ns, name, path string) {
	d := &appsv1.Deployment{}
	Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].LivenessProbe.HTTPGet.Path = path
	Expect(k8s.Patch(context.Background(), d, patch)).To(Succeed())
}

func rolledOut(ns, name string) func(g Gomega) {
	return func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas))
	}
}

var _ = Describe("a rollout that ships a probe on a wrong path to 10 replicas", Serial, func() {
	It("restarts at most one container per hold period and reports the storm, while the kubelet restarts the same Deployment over and over", func() {
		enrolledNS, nativeNS := newNamespace("badprobe"), newNamespace("badprobe-shadow")
		pol := createPolicy(enrolledNS, policyv1alpha1.EnhancedLivenessPolicySpec{}) // defaults: 25% / 50%, maxHold 10m
		// The twin is enrolled in Shadow mode: the kubelet restarts it as natively (it keeps its
		// probe), and the engine says what it would have done.
		shadow := createPolicy(nativeNS, policyv1alpha1.EnhancedLivenessPolicySpec{Mode: policyv1alpha1.ModeShadow})
		deployApp(enrolledNS, app{name: "web", replicas: 10, probe: httpProbe(), enrolled: true})
		deployApp(nativeNS, app{name: "web", replicas: 10, probe: httpProbe(), enrolled: true})
		metrics := leaderScraper(enrolledNS)

		By("both Deployments roll out a liveness probe on /wrong-path")
		rec := recordRestarts("1-wrong-probe", "A liveness probe on a wrong path rolled out to 10 replicas",
			[]appRef{{enrolledNS, "web"}}, []appRef{{nativeNS, "web"}})
		rolloutStart := time.Now()
		rollOutProbePath(enrolledNS, "web", "/wrong-path")
		rollOutProbePath(nativeNS, "web", "/wrong-path")
		Eventually(rolledOut(enrolledNS, "web")).WithTimeout(120 * time.Second).Should(Succeed())
		Eventually(rolledOut(nativeNS, "web")).WithTimeout(120 * time.Second).Should(Succeed())

		By("the storm is reported on the policy, every new pod's restart is held, and the hold is recorded")
		Eventually(policyCondition(pol, policyv1alpha1.ConditionStormDetected)).WithTimeout(60 * time.Second).
			Should(Equal(metav1.ConditionTrue))
		Eventually(hasEvent(enrolledNS, pol.Name, "FailureStorm", "", "")).WithTimeout(30 * time.Second).Should(BeTrue())
		Eventually(func() int { return heldPods(enrolledNS, "web", "FailureStorm") }).WithTimeout(60 * time.Second).
			Should(Equal(10))
		var hold *policyv1alpha1.RestartHold
		Eventually(func() *policyv1alpha1.RestartHold { hold = restartHoldOf(enrolledNS, "web", appContainer); return hold }).
			WithTimeout(30 * time.Second).ShouldNot(BeNil())
		onset := hold.Status.Onset.Time

		// The schedule: the first canary 30 s after the onset, and each canary that fails (a
		// wrong probe fails its new container at once) doubles the wait, up to maxHold: canaries
		// go no earlier than onset + 30 s, + 90 s, + 210 s, ... so by t after the onset at most
		// canariesBy(t) containers were restarted.
		canariesBy := func(t time.Duration) int32 {
			n, at, wait := int32(0), time.Duration(0), 30*time.Second
			for at+wait <= t {
				at, wait, n = at+wait, min(2*wait, 10*time.Minute), n+1
			}
			return n
		}
		By("for 150 s after the onset: at most one restart per hold period, each the hold's canary")
		Consistently(func(g Gomega) {
			t := time.Since(onset)
			ours := restartsOf(enrolledNS, "web")
			g.Expect(ours).To(BeNumerically("<=", canariesBy(t+5*time.Second)), "%d restarts %s after the onset", ours, t.Round(time.Second))
			g.Expect(int32(len(crrsIn(enrolledNS)))).To(BeNumerically("<=", canariesBy(t+5*time.Second)))
		}).WithTimeout(time.Until(onset.Add(150 * time.Second))).WithPolling(time.Second).Should(Succeed())
		hold = restartHoldOf(enrolledNS, "web", appContainer)
		Expect(hold.Status.Canaries).To(BeNumerically(">=", 1), "the first canary went 30 s after the onset")
		Expect(hold.Status.Wait).NotTo(BeNil())
		Expect(hold.Status.Wait.Duration).To(BeNumerically(">=", 60*time.Second), "a failed canary doubles the wait")

		rec.finish()
		ours, native := restartsOf(enrolledNS, "web"), restartsOf(nativeNS, "web")
		GinkgoWriter.Printf("wrong probe path on 10 replicas: enrolled %d restarts (%d canaries), native %d restarts\n",
			ours, hold.Status.Canaries, native)
		AddReportEntry("wrong-probe rollout restarts", map[string]int32{"enrolled": ours, "native": native})
		appendStormReport("wrong probe path, 10 replicas, rollout + 150 s after the onset: enrolled %d restarts, native %d restarts", ours, native)
		Expect(native).To(BeNumerically(">", 100), "the kubelet restarted the native Deployment's containers")

		enrolledFigures, shadowFigures := wrongProbeFigures(pol, shadow, rolloutStart, metrics)
		appendStormReport("wrong probe path, 10 replicas: Enforce figures %s; Shadow twin (the kubelet's %d restarts) %s",
			describeFigures(enrolledFigures), native, describeFigures(shadowFigures))

		By("kubectl enhancedliveness, as a user who may only read the namespace, explains the storm and the canary")
		checkPluginOnStorm(pol)
	})
})

// wrongProbeFigures checks the figures of the wrong-probe rollout against what the spec saw, and
// returns them. Enforce: every new pod's failure was held (avoided, FailureStorm), and each
// request the engine made (the canaries) is an agreed restart, with the time its hold added: no
// more than from the rollout's start (before which no new pod failed) to the last request. Not
// from the hold's onset: a new pod's first failure may come before the storm is confirmed.
// Shadow: the kubelet's restarts the engine would have held are avoided, nearly all of them (a
// restart the manager's cache saw no failure of first is not counted), never more than the
// kubelet made.
func wrongProbeFigures(pol, shadow *policyv1alpha1.EnhancedLivenessPolicy, rolloutStart time.Time,
	metrics func() string) (enforced, shadowed policyv1alpha1.WorkloadFigures) {
	GinkgoHelper()
	ns, shadowNS := pol.Namespace, shadow.Namespace
	Eventually(func(g Gomega) {
		enforced = workloadFigures(pol, "web", appsv1alpha1.ModeEnforce)
		crrs := crrsIn(ns)
		g.Expect(enforced.Avoided).To(BeNumerically(">=", 10), "every new pod's restart was held: %+v", enforced)
		g.Expect(enforced.Agreed).To(BeEquivalentTo(len(crrs)), "one agreed restart per request: %+v", enforced)
		g.Expect(enforced.AddedSeconds).To(HaveLen(len(crrs)))
		latest := time.Duration(0)
		for _, c := range crrs {
			latest = max(latest, c.CreationTimestamp.Sub(rolloutStart))
		}
		g.Expect(time.Duration(enforced.AddedMaxSeconds)*time.Second).To(BeNumerically("<=", latest+2*time.Second),
			"no restart came later after its failure than the last request after the rollout's start")
		m := figureMetricsOf(metrics(), ns, appsv1alpha1.ModeEnforce)
		g.Expect(m.agreed).To(BeEquivalentTo(enforced.Agreed), "the leader's counter")
		g.Expect(m.avoided).To(BeNumerically(">=", enforced.Avoided))
	}).WithTimeout(60 * time.Second).WithPolling(2 * time.Second).Should(Succeed())

	// The kubelet goes on restarting: read its count before and after the figures, which only
	// ever count a restart it made.
	before := restartsOf(shadowNS, "web")
	shadowed = workloadFigures(shadow, "web", appsv1alpha1.ModeShadow)
	m := figureMetricsOf(metrics(), shadowNS, appsv1alpha1.ModeShadow)
	after := restartsOf(shadowNS, "web")
	Expect(shadowed.Avoided+shadowed.Agreed).To(BeNumerically("<=", after), "%+v", shadowed)
	Expect(m.avoided + m.agreed).To(BeNumerically("<=", float64(after)))
	Expect(m.avoided).To(BeNumerically(">=", float64(shadowed.Avoided)), "the status follows the leader's counter")
	Expect(shadowed.Avoided).To(BeNumerically(">=", before/2),
		"the engine would have held most of the kubelet's %d restarts: %+v", before, shadowed)
	Expect(shadowed.Agreed).To(BeNumerically("<", shadowed.Avoided), "%+v", shadowed)
	return enforced, shadowed
}

// restartHoldOf returns the RestartHold of the workload's container in ns, nil while there is none.
func restartHoldOf(ns, workload, container string) *policyv1alpha1.RestartHold {
	var list policyv1alpha1.RestartHoldList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	for i := range list.Items {
		if h := &list.Items[i]; h.Status.Workload.Name == workload && h.Status.Container == container {
			return h
		}
	}
	return nil
}

var _ = Describe("a shared dependency that stays down across restarts, on 6 replicas", func() {
	It("restarts at most maxUnavailable containers, then holds the rest as RestartIneffective or FailureStorm", func() {
		enrolledNS, nativeNS := newNamespace("sticky"), newNamespace("sticky-native")
		const maxUnavailable = 2
		pol := createPolicy(enrolledNS, policyv1alpha1.EnhancedLivenessPolicySpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(maxUnavailable)),
			MaxFailing:     ptr.To(intstr.FromString("50%")), // 3 of 6
			// Two tokens at once, the next in 10 s: by then the first two restarts have shown
			// whether they helped.
			RateLimit: policyv1alpha1.RateLimit{RestartsPerMinute: 6, Burst: 2},
		})
		deployApp(enrolledNS, app{name: "api", replicas: 6, probe: httpProbe(), enrolled: true, stickySickness: true})
		deployApp(nativeNS, app{name: "api", replicas: 6, probe: httpProbe(), stickySickness: true})
		enrolled, native := appPods(enrolledNS, "api"), appPods(nativeNS, "api")

		By("the dependency goes down for 2 replicas: both are restarted, and fail again at once")
		rec := recordRestarts("2-sticky-sickness", "A shared dependency down for good on 6 replicas (maxUnavailable 2)",
			[]appRef{{enrolledNS, "api"}}, []appRef{{nativeNS, "api"}})
		for _, pods := range [][]corev1.Pod{enrolled[:2], native[:2]} {
			for _, p := range pods {
				setSick(p, true)
			}
		}
		Eventually(func() int { return len(crrsIn(enrolledNS)) }).WithTimeout(60 * time.Second).Should(Equal(2))
		Eventually(policyCondition(pol, policyv1alpha1.ConditionRestartsIneffective)).WithTimeout(90 * time.Second).
			Should(Equal(metav1.ConditionTrue))
		Eventually(hasEvent(enrolledNS, pol.Name, "RestartIneffective", "", "")).WithTimeout(30 * time.Second).Should(BeTrue())

		By("then for the other 4: nothing more is restarted")
		for _, pods := range [][]corev1.Pod{enrolled[2:], native[2:]} {
			for _, p := range pods {
				setSick(p, true)
			}
		}
		Eventually(func() int { return heldPods(enrolledNS, "api", "RestartIneffective", "FailureStorm") }).
			WithTimeout(60 * time.Second).Should(Equal(6))
		// The schedule: the hold began with two restarts that did not help, so its first canary
		// waits 30 s doubled twice: nothing more is restarted until then (60 s at most here).
		hold := restartHoldOf(enrolledNS, "api", appContainer)
		Expect(hold).NotTo(BeNil())
		Expect(hold.Status.Reason).To(Equal(string(policyv1alpha1.HoldRestartIneffective)))
		Expect(hold.Status.Wait).To(Equal(&metav1.Duration{Duration: 2 * time.Minute}))
		Expect(hold.Status.NextCanary).NotTo(BeNil())
		Expect(hold.Status.NextCanary.Time).To(BeTemporally("~", hold.Status.Onset.Add(2*time.Minute), time.Second))
		quiet := min(60*time.Second, time.Until(hold.Status.NextCanary.Time)-2*time.Second)
		Expect(quiet).To(BeNumerically(">", 20*time.Second), "the canary is not due before the check")
		Consistently(func() int { return len(crrsIn(enrolledNS)) }).WithTimeout(quiet).
			WithPolling(time.Second).Should(Equal(maxUnavailable))
		rec.finish()
		ours := restartsOf(enrolledNS, "api")
		Expect(ours).To(BeNumerically("<=", maxUnavailable))

		theirs := restartsOf(nativeNS, "api")
		GinkgoWriter.Printf("sticky sickness on 6 replicas: enrolled %d restarts (%d requests), native %d restarts\n",
			ours, len(crrsIn(enrolledNS)), theirs)
		AddReportEntry("sticky sickness restarts", map[string]int32{"enrolled": ours, "native": theirs})
		appendStormReport("sticky sickness, 6 replicas, maxUnavailable 2: enrolled %d restarts, native %d restarts", ours, theirs)
		Expect(theirs).To(BeNumerically(">", ours), "the kubelet restarted the native Deployment's containers")
	})
})
