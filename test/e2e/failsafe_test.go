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
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
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

// nodeCtr runs ctr against the node's containerd (the suite runs on the node, as root).
func nodeCtr(args ...string) (string, error) {
	base := []string{"--address", envOr("E2E_CONTAINERD_SOCK", "/run/containerd/containerd.sock"), "-n", "k8s.io"}
	return project.Run(exec.Command("ctr", append(base, args...)...))
}

// daemonPodList lists the daemon pods (owned by a DaemonSet in the operator namespace).
func daemonPodList() []corev1.Pod {
	var pods corev1.PodList
	Expect(k8s.List(context.Background(), &pods, client.InNamespace(operatorNS))).To(Succeed())
	var out []corev1.Pod
	for _, p := range pods.Items {
		for _, o := range p.OwnerReferences {
			if o.Kind == "DaemonSet" {
				out = append(out, p)
			}
		}
	}
	return out
}

func daemonRunning() bool {
	for _, p := range daemonPodList() {
		if p.DeletionTimestamp == nil && isReady(p) {
			return true
		}
	}
	return false
}

// deleteDaemonPods deletes the daemon pods and waits until the old ones are gone.
func deleteDaemonPods() {
	old := daemonPodList()
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

var _ = Describe("the node daemon stopped (scenario 5)", func() {
	It("restarts nothing while its Lease is stale, and restarts a still-failing container when it returns", func() {
		ns := newNamespace("daemon")
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true, stickySickness: true,
			annotations: map[string]string{appsv1alpha1.AnnotationRestartDisabled: appsv1alpha1.TrueValue}})
		pod := onlyPod(ns, "web")
		setSick(pod, true)
		By("the daemon reports the failure; the pod's emergency switch holds the restart")
		Eventually(probeFailed(pod.Spec.NodeName, pod.UID)).WithTimeout(60 * time.Second).Should(BeTrue())

		By("stopping the daemon: its image is removed from the node and its pod deleted, so it cannot come back")
		restore := stopDaemon()
		Eventually(daemonLeaseFresh).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(BeFalse())
		Expect(daemonRunning()).To(BeFalse())
		// The manager judges the Lease on its own clock, from when it saw the last renewal (a
		// moment after the node wrote it): wait for its verdict (rule 1b comes before the
		// restart-disabled switch), not only the node's, before the switch is lifted.
		Eventually(hasEvent(ns, pod.Name, "RestartHeld", "", "is not reporting")).WithTimeout(60*time.Second).
			Should(BeTrue(), "the manager holds the pod DaemonNotReporting")

		By("allowing restarts of the pod: still nothing, the failure on record comes from a silent daemon")
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, appsv1alpha1.AnnotationRestartDisabled))
		Expect(k8s.Patch(context.Background(), &pod, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		Expect(probeFailed(pod.Spec.NodeName, pod.UID)()).To(BeTrue())
		Consistently(restartCount(ns, pod.Name)).WithTimeout(15 * time.Second).Should(BeEquivalentTo(0))
		Expect(crrsIn(ns)).To(BeEmpty())

		By("the daemon returns (image back): its Lease is renewed and the still-failing container is restarted")
		restore()
		Eventually(daemonLeaseFresh).WithTimeout(60 * time.Second).Should(BeTrue())
		Eventually(restartCount(ns, pod.Name)).WithTimeout(90 * time.Second).Should(BeNumerically(">=", 1))
		Expect(crrsIn(ns)).NotTo(BeEmpty())
	})
})

// stopDaemon stops the node daemon for good: its image is removed from the node and its pod
// deleted, so its replacement stays in image-pull back-off. The returned function (also run at
// cleanup) brings it back and waits until it runs.
func stopDaemon() (restore func()) {
	GinkgoHelper()
	_, err := nodeCtr("images", "rm", operatorImage)
	Expect(err).NotTo(HaveOccurred())
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		out, err := nodeCtr("images", "import", filepath.Join(envOr("E2E_IMAGES_DIR", "bin/images"), "operator.tar"))
		Expect(err).NotTo(HaveOccurred(), out)
		deleteDaemonPods() // the replacement in image-pull back-off
		// containerd's CRI image store may learn of the re-imported image only a minute or more
		// later (seen: 82 s of ErrImagePull for an image ctr had imported); the kubelet's back-off
		// then retries within its 5-minute cap.
		Eventually(daemonRunning).WithTimeout(4 * time.Minute).Should(BeTrue())
	}
	DeferCleanup(restore)
	deleteDaemonPods()
	return restore
}

var _ = Describe("the node daemon stopped while a pod is Failed, which recovers meanwhile", func() {
	It("restarts nothing when the daemon returns: the failure on record is from before its start", func() {
		ns := newNamespace("stale")
		// A 10 s period: the returning daemon probes the pod only after up to 10 s (its start
		// spreads the first probes), while the failure its predecessor left is still on record.
		probe := httpProbe()
		probe.PeriodSeconds, probe.FailureThreshold = 10, 1
		deployApp(ns, app{name: "web", replicas: 1, probe: probe, enrolled: true,
			annotations: map[string]string{appsv1alpha1.AnnotationRestartDisabled: appsv1alpha1.TrueValue}})
		pod := onlyPod(ns, "web")
		setSick(pod, true)
		Eventually(probeFailed(pod.Spec.NodeName, pod.UID)).WithTimeout(60 * time.Second).Should(BeTrue())

		By("stopping the daemon; once its Lease is stale the pod recovers while nobody probes it")
		restore := stopDaemon()
		Eventually(daemonLeaseFresh).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(BeFalse())
		// The manager judges the Lease on its own clock, from when it saw the last renewal: wait
		// for its verdict (rule 1b comes before the restart-disabled switch), not only the node's.
		Eventually(hasEvent(ns, pod.Name, "RestartHeld", "", "is not reporting")).WithTimeout(60*time.Second).
			Should(BeTrue(), "the manager holds the pod DaemonNotReporting")
		setSick(pod, false)
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, appsv1alpha1.AnnotationRestartDisabled))
		Expect(k8s.Patch(context.Background(), &pod, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		Expect(probeFailed(pod.Spec.NodeName, pod.UID)()).To(BeTrue(), "the stale failure is still on record")

		By("the daemon returns: its first probe finds the pod healthy, and nothing is restarted")
		restore()
		Eventually(daemonLeaseFresh).WithTimeout(60 * time.Second).Should(BeTrue())
		Eventually(probeFailed(pod.Spec.NodeName, pod.UID)).WithTimeout(60 * time.Second).Should(BeFalse())
		Consistently(restartCount(ns, pod.Name)).WithTimeout(15 * time.Second).Should(BeEquivalentTo(0))
		Expect(crrsIn(ns)).To(BeEmpty())
	})
})

var _ = Describe("the manager scaled to 0 (scenario 6)", func() {
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
	var slices discoveryv1.EndpointSliceList
	if err := k8s.List(context.Background(), &slices, client.InNamespace(operatorNS)); err != nil {
		return false
	}
	for _, s := range slices.Items {
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
