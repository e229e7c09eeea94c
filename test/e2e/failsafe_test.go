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
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Scenarios 5 and 6 of the e2e issue: the operator's parts going away never makes things worse.

// probeFailed: the node's results (its NodePodProbeReport) report a Failed liveness result for
// the pod.
func probeFailed(node string, uid types.UID) func() bool {
	return func() bool {
		rep := &appsv1alpha1.NodePodProbeReport{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: node}, rep); err != nil {
			return false
		}
		ps := rep.Status.Pod(uid)
		return ps != nil && ps.FailedProbes() > 0
	}
}

// canaryPods names the pods of ns whose restart of the container was requested as a hold's canary
// (the RestartRequested event says so).
func canaryPods(ns, container string) []string {
	var list eventsv1.EventList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Reason == "RestartRequested" && strings.Contains(e.Note, "the canary of the held restarts of container "+container+" ") &&
			!slices.Contains(out, e.Regarding.Name) {
			out = append(out, e.Regarding.Name)
		}
	}
	return out
}

// deleteDaemonPod deletes the node's daemon pods and waits until they are gone.
func deleteDaemonPod(node string) {
	var old []corev1.Pod
	for _, p := range daemonPodList() {
		if p.Spec.NodeName == node {
			old = append(old, p)
		}
	}
	for i := range old {
		Expect(ignoreNotFound(k8s.Delete(context.Background(), &old[i]))).To(Succeed())
	}
	Eventually(func() []string {
		var left []string
		for _, p := range daemonPodList() {
			for _, o := range old {
				if p.UID == o.UID {
					left = append(left, p.Name)
				}
			}
		}
		return left
	}).WithTimeout(90 * time.Second).Should(BeEmpty())
}

// heldNow is a poll function: the policy's status lists the pod's restart as held for reason.
func heldNow(p *policyv1alpha1.EnhancedLivenessPolicy, pod string, reason policyv1alpha1.HoldReason) func() bool {
	return func() bool {
		Expect(k8s.Get(context.Background(), clientKey(p), p)).To(Succeed())
		for _, h := range p.Status.HeldPods {
			if h.Pod == pod && h.Reason == reason {
				return true
			}
		}
		return false
	}
}

var _ = Describe("the daemon of node A stopped while node B's runs (scenario 5)", Serial, func() {
	It("holds node A's failing pods DaemonNotReporting and reports them, restarts node B's hang as natively, chooses a storm's canary on node B only, and restarts A's still-failing containers once its daemon returns",
		func() {
			nodeA, nodeB := twoNodes()
			ns := newNamespace("daemon")
			// maxUnavailable 3: the fleet's hung pods on node A (never restarted while its daemon
			// is silent) leave the budget room for node B's canary and the pod that follows it.
			pol := createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{MaxUnavailable: ptr.To(intstr.FromInt32(3))})
			restartsOff := map[string]string{appsv1alpha1.AnnotationRestartDisabled: appsv1alpha1.TrueValue}
			deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true, stickySickness: true, node: nodeA,
				annotations: restartsOff})
			deployApp(ns, app{name: "b-web", replicas: 1, probe: httpProbe(), enrolled: true, node: nodeB})
			deployApp(ns, app{name: "b-native", replicas: 1, probe: httpProbe(), node: nodeB})
			// A fleet of 4 spread over both nodes (2 each), whose hang a restart cures.
			deployApp(ns, app{name: "fleet", replicas: 4, probe: httpProbe(), enrolled: true, spread: true, annotations: restartsOff})
			pod := onlyPod(ns, "web")
			fleet := appPods(ns, "fleet")
			Expect(fleet).To(HaveLen(4))
			var fleetA, fleetB []corev1.Pod
			for _, p := range fleet {
				if p.Spec.NodeName == nodeA {
					fleetA = append(fleetA, p)
				} else {
					fleetB = append(fleetB, p)
				}
			}
			Expect(fleetA).To(HaveLen(2), "the fleet is spread over both nodes")
			setSick(pod, true)
			for _, p := range fleet {
				setSick(p, true)
			}
			By("node A's daemon reports the failures; the pods' emergency switch holds the restarts")
			Eventually(probeFailed(nodeA, pod.UID)).WithTimeout(60 * time.Second).Should(BeTrue())
			for _, p := range fleet {
				Eventually(probeFailed(p.Spec.NodeName, p.UID)).WithTimeout(60*time.Second).Should(BeTrue(), "fleet pod %s on %s", p.Name, p.Spec.NodeName)
			}

			By("stopping node A's daemon: its image is removed from node A and its pod deleted, so it cannot come back")
			restore := stopDaemon(nodeA)
			Eventually(daemonLeaseFresh(nodeA)).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(BeFalse())
			Expect(daemonRunning(nodeA)()).To(BeFalse())
			// The manager judges the Lease on its own clock, from when it saw the last renewal (a
			// moment after the node wrote it): wait for its verdict (rule 1b comes before the
			// restart-disabled switch), not only the node's, before the switch is lifted.
			Eventually(hasEvent(ns, pod.Name, "RestartHeld", "", "is not reporting")).WithTimeout(60*time.Second).
				Should(BeTrue(), "the manager holds the pod DaemonNotReporting")
			Eventually(heldNow(pol, pod.Name, policyv1alpha1.HoldDaemonNotReporting)).WithTimeout(60*time.Second).
				Should(BeTrue(), "the policy's status lists the hold")
			for _, p := range fleetA {
				Eventually(hasEvent(ns, p.Name, "RestartHeld", "", "is not reporting")).WithTimeout(60*time.Second).
					Should(BeTrue(), "fleet pod %s on node A held DaemonNotReporting", p.Name)
			}

			By("allowing restarts of the pods: still nothing on node A, the failures on record come from a silent daemon")
			patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, appsv1alpha1.AnnotationRestartDisabled))
			Expect(k8s.Patch(context.Background(), &pod, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
			for i := range fleet {
				Expect(k8s.Patch(context.Background(), &fleet[i], client.RawPatch(types.MergePatchType, patch))).To(Succeed())
			}
			lifted := time.Now()
			Expect(probeFailed(nodeA, pod.UID)()).To(BeTrue())

			By("meanwhile node B's daemon reports: hangs there are restarted as natively, within threshold × period + 10 s")
			Expect(daemonLeaseFresh(nodeB)()).To(BeTrue())
			limit := time.Duration(httpProbe().FailureThreshold*httpProbe().PeriodSeconds)*time.Second + 10*time.Second
			bWeb, bNative := onlyPod(ns, "b-web"), onlyPod(ns, "b-native")
			tn := timeToRestart(ns, bNative, 90*time.Second)
			te := timeToRestart(ns, bWeb, limit)
			expectRestartedByOperator(ns, bWeb)
			appendStormReport("hang on node B while node A's daemon is stopped: enrolled restarted after %s, native after %s",
				te.Round(100*time.Millisecond), tn.Round(100*time.Millisecond))

			Expect(restartCount(ns, pod.Name)()).To(BeEquivalentTo(0))
			Expect(crrsOfPod(ns, string(pod.UID))).To(BeEmpty())
			Expect(heldNow(pol, pod.Name, policyv1alpha1.HoldDaemonNotReporting)()).To(BeTrue())

			By("the fleet's storm (4 of 4 failing) is held; its canary is one of node B's pods, which pass after their restart; node A's stay held")
			Eventually(allRecovered(ns, fleetB)).WithTimeout(150*time.Second).WithPolling(time.Second).Should(Succeed(),
				"node B's fleet pods restarted (a canary, then the other) and Ready")
			fleetBAt := time.Since(lifted)
			Expect(heldPods(ns, "fleet", "FailureStorm")).To(BeNumerically(">", 0), "the fleet's restarts were held as a storm")
			canaries := canaryPods(ns, appContainer)
			Expect(canaries).NotTo(BeEmpty(), "a canary went")
			for _, name := range canaries {
				Expect(getPod(ns, name).Spec.NodeName).To(Equal(nodeB), "canary %s runs where a daemon reports", name)
			}
			for _, p := range fleetA {
				Expect(restartCount(ns, p.Name)()).To(BeEquivalentTo(0), "fleet pod %s on node A", p.Name)
				Expect(crrsOfPod(ns, string(p.UID))).To(BeEmpty(), "fleet pod %s on node A", p.Name)
			}
			appendStormReport("fleet of 4 (2 per node) hangs while node A's daemon is stopped: node B's 2 restarted (canary %v) and Ready %s after restarts were allowed, node A's held",
				canaries, fleetBAt.Round(time.Second))

			By("node A's daemon returns (image back): its Lease is renewed and the still-failing containers are restarted")
			restore()
			Eventually(daemonLeaseFresh(nodeA)).WithTimeout(60 * time.Second).Should(BeTrue())
			Eventually(restartCount(ns, pod.Name)).WithTimeout(90 * time.Second).Should(BeNumerically(">=", 1))
			Expect(crrsOfPod(ns, string(pod.UID))).NotTo(BeEmpty())
			Eventually(allRecovered(ns, fleetA)).WithTimeout(120*time.Second).WithPolling(time.Second).Should(Succeed(),
				"node A's fleet pods restarted and Ready once its daemon reports")
		})
})

// stopDaemon stops the node's daemon for good: its image is removed from the node and its pod
// deleted, so its replacement stays in image-pull back-off. The returned function (also run at
// cleanup) brings it back and waits until it runs.
func stopDaemon(node string) (restore func()) {
	GinkgoHelper()
	_, err := nodeCtr(node, "images", "rm", operatorImage)
	Expect(err).NotTo(HaveOccurred())
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		out, err := nodeCtr(node, "images", "import", filepath.Join(envOr("E2E_IMAGES_DIR", "bin/images"), "operator.tar"))
		Expect(err).NotTo(HaveOccurred(), out)
		deleteDaemonPod(node) // the replacement in image-pull back-off
		// containerd's CRI image store may learn of the re-imported image only a minute or more
		// later (seen: 82 s of ErrImagePull for an image ctr had imported); the kubelet's back-off
		// then retries within its 5-minute cap.
		Eventually(daemonRunning(node)).WithTimeout(4 * time.Minute).Should(BeTrue())
	}
	DeferCleanup(restore)
	deleteDaemonPod(node)
	return restore
}

var _ = Describe("the node daemon stopped while a pod is Failed, which recovers meanwhile", Serial, func() {
	It("restarts nothing when the daemon returns: the failure on record is from before its start", func() {
		ns := newNamespace("stale")
		// A 10 s period: the returning daemon probes the pod only after up to 10 s (its start
		// spreads the first probes), while the failure its predecessor left is still on record.
		probe := httpProbe()
		probe.PeriodSeconds, probe.FailureThreshold = 10, 1
		deployApp(ns, app{name: "web", replicas: 1, probe: probe, enrolled: true,
			annotations: map[string]string{appsv1alpha1.AnnotationRestartDisabled: appsv1alpha1.TrueValue}})
		pod := onlyPod(ns, "web")
		node := pod.Spec.NodeName
		setSick(pod, true)
		Eventually(probeFailed(node, pod.UID)).WithTimeout(60 * time.Second).Should(BeTrue())

		By("stopping the pod's node's daemon; once its Lease is stale the pod recovers while nobody probes it")
		restore := stopDaemon(node)
		Eventually(daemonLeaseFresh(node)).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(BeFalse())
		// The manager judges the Lease on its own clock, from when it saw the last renewal: wait
		// for its verdict (rule 1b comes before the restart-disabled switch), not only the node's.
		Eventually(hasEvent(ns, pod.Name, "RestartHeld", "", "is not reporting")).WithTimeout(60*time.Second).
			Should(BeTrue(), "the manager holds the pod DaemonNotReporting")
		setSick(pod, false)
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, appsv1alpha1.AnnotationRestartDisabled))
		Expect(k8s.Patch(context.Background(), &pod, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		Expect(probeFailed(node, pod.UID)()).To(BeTrue(), "the stale failure is still on record")

		By("the daemon returns: its first probe finds the pod healthy, and nothing is restarted")
		restore()
		Eventually(daemonLeaseFresh(node)).WithTimeout(60 * time.Second).Should(BeTrue())
		Eventually(probeFailed(node, pod.UID)).WithTimeout(60 * time.Second).Should(BeFalse())
		Consistently(restartCount(ns, pod.Name)).WithTimeout(15 * time.Second).Should(BeEquivalentTo(0))
		Expect(crrsIn(ns)).To(BeEmpty())
	})
})

var _ = Describe("the manager scaled to 0 (scenario 6)", Serial, func() {
	It("lets a new opted-in pod keep its native livenessProbe (webhook fails open); the kubelet restarts it", func() {
		mgr := managerDeployment()
		replicas := ptr.Deref(mgr.Spec.Replicas, 1)
		scale := func(n int32) {
			patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
			Expect(k8s.Patch(context.Background(), mgr, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		}
		DeferCleanup(func() {
			By("scaling the manager back and waiting for its webhook")
			scale(replicas)
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(context.Background(), clientKey(mgr), mgr)).To(Succeed())
				g.Expect(mgr.Status.AvailableReplicas).To(Equal(replicas))
			}).WithTimeout(120 * time.Second).Should(Succeed())
			Eventually(webhookServing).WithTimeout(60 * time.Second).Should(BeTrue())
		})
		By("scaling the manager Deployment to 0 and waiting for its pods to be gone")
		scale(0)
		Eventually(func() int {
			var pods corev1.PodList
			Expect(k8s.List(context.Background(), &pods, client.InNamespace(operatorNS),
				client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			return len(pods.Items)
		}).WithTimeout(60 * time.Second).Should(BeZero())

		ns := newNamespace("failopen")
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true})
		pod := onlyPod(ns, "web")
		By("the pod was created without the webhook: native probe kept, not enrolled")
		Expect(pod.Annotations).To(HaveKeyWithValue(appsv1alpha1.AnnotationEnabled, appsv1alpha1.TrueValue))
		Expect(pod.Spec.Containers[0].LivenessProbe).NotTo(BeNil())
		Expect(pod.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))

		setSick(pod, true)
		By("the kubelet probes and restarts it natively")
		Eventually(restartCount(ns, pod.Name)).WithTimeout(60 * time.Second).Should(BeNumerically(">=", 1))
		Eventually(hasEvent(ns, pod.Name, "Unhealthy", "kubelet", "Liveness")).WithTimeout(30 * time.Second).Should(BeTrue())
		Expect(hasEvent(ns, pod.Name, "Killing", "kubelet", "")()).To(BeTrue())
		Expect(crrsIn(ns)).To(BeEmpty())
	})
})

// webhookServing: the webhook Service of the operator has a ready endpoint.
func webhookServing() bool {
	var endpointSlices discoveryv1.EndpointSliceList
	if err := k8s.List(context.Background(), &endpointSlices, client.InNamespace(operatorNS)); err != nil {
		return false
	}
	for _, s := range endpointSlices.Items {
		if !strings.Contains(s.Labels["kubernetes.io/service-name"], "webhook") {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				return true
			}
		}
	}
	return false
}
