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
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// A hang that a restart cures is restarted as natively unless restarting demonstrably hurts:
// a whole workload that hangs is recovered within the 120 s the spec allows with the default
// policy (a canary 30 s after the onset, then the rest within the budget and the rate limit), whatever the manager
// does, and a noisy blacklisted sidecar holds nothing of the app beside it. Each beside the same
// Deployment left to the kubelet.

// allRecovered: every pod of the app that was there at the start had its app container
// restarted at least once, and is Ready now.
func allRecovered(ns string, pods []corev1.Pod) func(g Gomega) {
	return func(g Gomega) {
		for _, p := range pods {
			cur := &corev1.Pod{}
			g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(&p), cur)).To(Succeed())
			s := containerStatus(cur, appContainer)
			g.Expect(s.RestartCount).To(BeNumerically(">", containerStatus(&p, appContainer).RestartCount),
				"%s/%s restarted", ns, p.Name)
			g.Expect(s.Ready).To(BeTrue(), "%s/%s ready", ns, p.Name)
		}
	}
}

// hangAll makes every pod of both Deployments hang at once and returns when each was recovered,
// measured from the hang.
func hangAll(enrolledNS, nativeNS string, limit time.Duration) (enrolled, native time.Duration) {
	ours, theirs := appPods(enrolledNS, "web"), appPods(nativeNS, "web")
	Expect(ours).To(HaveLen(10))
	Expect(theirs).To(HaveLen(10))
	start := time.Now()
	var wg sync.WaitGroup
	for _, p := range append(append([]corev1.Pod(nil), ours...), theirs...) {
		wg.Go(func() {
			defer GinkgoRecover()
			setSick(p, true)
		})
	}
	wg.Wait()
	var nativeAt time.Duration
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Eventually(allRecovered(nativeNS, theirs)).WithTimeout(limit).WithPolling(time.Second).Should(Succeed())
		nativeAt = time.Since(start)
	}()
	Eventually(allRecovered(enrolledNS, ours)).WithTimeout(limit).WithPolling(time.Second).Should(Succeed(),
		"every enrolled pod restarted and Ready within %s of the hang", limit)
	enrolledAt := time.Since(start)
	<-done
	return enrolledAt, nativeAt
}

var _ = Describe("all 10 replicas of a Deployment hang, a hang a restart cures", func() {
	It("restarts and readies every pod within 120 s with the default policy, a canary first", func() {
		enrolledNS, nativeNS := newNamespace("hangall"), newNamespace("hangall-native")
		// A policy with every field defaulted: the default policy's settings, and a status that
		// shows the figures.
		pol := createPolicy(enrolledNS, policyv1alpha1.EnhancedLivenessPolicySpec{})
		deployApp(enrolledNS, app{name: "web", replicas: 10, probe: httpProbe(), enrolled: true, spread: true})
		deployApp(nativeNS, app{name: "web", replicas: 10, probe: httpProbe(), spread: true})
		metrics := leaderScraper(enrolledNS)

		start := time.Now()
		te, tn := hangAll(enrolledNS, nativeNS, 120*time.Second)
		By("the storm was held, and one canary went before the others")
		Expect(heldPods(enrolledNS, "web", "FailureStorm")).To(BeNumerically(">", 0))
		Expect(eventCount(enrolledNS, "RestartRequested", "the canary of the held restarts of container app")).To(Equal(1))
		GinkgoWriter.Printf("10 replicas hang: enrolled all Ready after %s, native after %s\n", te.Round(time.Second), tn.Round(time.Second))
		appendStormReport("10 replicas hang, default policy: enrolled all restarted and Ready after %s, native after %s",
			te.Round(time.Second), tn.Round(time.Second))

		By("the figures: every hang restarted (agreed, one per request), the held ones avoided first, with the time the hold added")
		var fig policyv1alpha1.WorkloadFigures
		Eventually(func(g Gomega) {
			fig = workloadFigures(pol, "web", appsv1alpha1.ModeEnforce)
			g.Expect(fig.Agreed).To(BeEquivalentTo(len(crrsIn(enrolledNS))), "%+v", fig)
			g.Expect(fig.Agreed).To(BeNumerically(">=", 10), "%+v", fig)
			m := figureMetricsOf(metrics(), enrolledNS, appsv1alpha1.ModeEnforce)
			g.Expect(m.agreed).To(BeEquivalentTo(fig.Agreed), "the leader's counter")
			g.Expect(m.addedCount).To(Equal(m.agreed))
		}).WithTimeout(60 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
		Expect(fig.Avoided).To(BeNumerically(">", 0), "the storm was held: %+v", fig)
		// The canary went 30 s after the onset (every pod hung within a second or two of it), the
		// others after it; and no restart came after every pod was Ready again.
		Expect(fig.AddedMaxSeconds).To(BeNumerically(">=", 20), "%+v", fig)
		Expect(time.Duration(fig.AddedMaxSeconds)*time.Second).To(BeNumerically("<=", te), "%+v", fig)
		appendStormReport("10 replicas hang, default policy: enrolled figures %s", describeFigures(fig))
		recordRecovery("3-hang-all", "All 10 replicas of a Deployment hang, default policy", start, te, tn, &fig)
	})
})

var _ = Describe("all 10 replicas hang while the manager pods are force-deleted every 40 s", Serial, func() {
	It("restarts and readies every pod within 240 s: each new leader goes on with the hold where it was", func() {
		enrolledNS, nativeNS := newNamespace("hangkill"), newNamespace("hangkill-native")
		deployApp(enrolledNS, app{name: "web", replicas: 10, probe: httpProbe(), enrolled: true, spread: true})
		deployApp(nativeNS, app{name: "web", replicas: 10, probe: httpProbe(), spread: true})

		stop, stopped := make(chan struct{}), make(chan struct{})
		kills := 0
		go func() {
			defer GinkgoRecover()
			defer close(stopped)
			for {
				var pods corev1.PodList
				Expect(k8s.List(context.Background(), &pods, client.InNamespace(operatorNS),
					client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
				for i := range pods.Items {
					_ = k8s.Delete(context.Background(), &pods.Items[i], client.GracePeriodSeconds(0))
				}
				kills++
				select {
				case <-stop:
					return
				case <-time.After(40 * time.Second):
				}
			}
		}()
		DeferCleanup(func() {
			By("the manager is left alone again, and back before the next spec")
			close(stop)
			<-stopped
			mgr := managerDeployment()
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(context.Background(), clientKey(mgr), mgr)).To(Succeed())
				g.Expect(mgr.Status.AvailableReplicas).To(Equal(*mgr.Spec.Replicas))
			}).WithTimeout(120 * time.Second).Should(Succeed())
		})
		time.Sleep(5 * time.Second) // the first kill has happened: the hang starts without a manager

		start := time.Now()
		te, tn := hangAll(enrolledNS, nativeNS, 240*time.Second)
		GinkgoWriter.Printf("10 replicas hang, manager pods force-deleted every 40 s (%d times): enrolled all Ready after %s, native after %s\n",
			kills, te.Round(time.Second), tn.Round(time.Second))
		appendStormReport("10 replicas hang, manager pods force-deleted every 40 s: enrolled all restarted and Ready after %s, native after %s",
			te.Round(time.Second), tn.Round(time.Second))
		recordRecovery("4-hang-manager-killed", "All 10 replicas hang while the manager pods are force-deleted every 40 s", start, te, tn, nil)
	})
})

var _ = Describe("a blacklisted sidecar failing on every replica, then a hang of app in one", func() {
	It("restarts the app's hang as the kubelet does: the sidecar's failures are no storm of app", func() {
		enrolledNS, nativeNS := newNamespace("sidecar"), newNamespace("sidecar-native")
		createPolicy(enrolledNS, policyv1alpha1.EnhancedLivenessPolicySpec{
			Blacklist: &policyv1alpha1.Blacklist{Containers: []string{"side"}},
		})
		sidecar := corev1.Container{
			Name: "side", Image: appImage, ImagePullPolicy: corev1.PullNever,
			Env: []corev1.EnvVar{{Name: "HTTP_PORT", Value: "9080"}, {Name: "TCP_PORT", Value: "9081"}, {Name: "GRPC_PORT", Value: "9082"}},
			// A probe that never passes: the sidecar fails on every replica.
			LivenessProbe: probeWith(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/wrong-path", Port: intstr.FromInt32(9080)}}),
		}
		deployApp(enrolledNS, app{name: "web", replicas: 4, probe: httpProbe(), enrolled: true, sidecars: []corev1.Container{sidecar}})
		deployApp(nativeNS, app{name: "web", replicas: 4, probe: httpProbe(), sidecars: []corev1.Container{sidecar}})
		enrolled, native := appPods(enrolledNS, "web"), appPods(nativeNS, "web")

		By("the sidecar fails on every enrolled replica and is held by choice, never restarted")
		Eventually(func() int { return heldPods(enrolledNS, "web", "Blacklisted") }).WithTimeout(60 * time.Second).Should(Equal(4))

		By("app hangs in one replica of each: restarted within threshold × period + 10 s, as natively")
		limit := time.Duration(httpProbe().FailureThreshold*httpProbe().PeriodSeconds)*time.Second + 10*time.Second
		tn := timeToRestart(nativeNS, native[0], 90*time.Second)
		te := timeToRestart(enrolledNS, enrolled[0], limit)
		expectRestartedByOperator(enrolledNS, enrolled[0])
		Expect(heldPods(enrolledNS, "web", "FailureStorm")).To(BeZero())
		for _, p := range enrolled {
			cur := getPod(enrolledNS, p.Name)
			Expect(containerStatus(cur, "side").RestartCount).To(BeZero(), "the blacklisted sidecar of %s is never restarted", p.Name)
		}
		appendStormReport("hang of app beside a blacklisted sidecar failing on 4 replicas: enrolled restarted after %s, native after %s",
			te.Round(100*time.Millisecond), tn.Round(100*time.Millisecond))
	})
})

// eventCount counts the events of ns with this reason whose note contains noteSubstr.
func eventCount(ns, reason, noteSubstr string) int {
	var list eventsv1.EventList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, e := range list.Items {
		if e.Reason == reason && strings.Contains(e.Note, noteSubstr) {
			n++
		}
	}
	return n
}
