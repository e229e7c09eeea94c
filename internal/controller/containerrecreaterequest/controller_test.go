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

package containerrecreaterequest

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

const (
	lifeNS      = "crr-lifecycle"
	lifeNode    = "crr-node-1"
	lifeTimeout = 10 * time.Second
	pickup      = 2 * time.Second
)

// lifePod creates a pod on lifeNode; enrolled pods are in the manager's cache, others are not.
func lifePod(name string, enrolled bool) *corev1.Pod {
	GinkgoHelper()
	b := testutil.NewPod(lifeNS, name).OnNode(lifeNode).Containers("web")
	if enrolled {
		b.Enrolled()
	}
	return b.Create(ctx, k8sClient)
}

// lifeCRR creates a request for pod as the CRR webhook leaves it (this suite runs no webhooks).
func lifeCRR(pod *corev1.Pod, mutate func(*appsv1alpha1.ContainerRecreateRequest)) *appsv1alpha1.ContainerRecreateRequest {
	GinkgoHelper()
	crr := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: lifeNS, GenerateName: pod.Name + "-",
			Labels: map[string]string{
				appsv1alpha1.LabelCRRPodUID: string(pod.UID), appsv1alpha1.LabelCRRNodeName: lifeNode,
			}},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{
			PodName: pod.Name,
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "web",
				StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://1"}}},
			TTLSecondsAfterFinished: ptr.To[int32](300),
		},
	}
	if mutate != nil {
		mutate(crr)
	}
	Expect(k8sClient.Create(ctx, crr)).To(Succeed())
	return crr
}

// daemonSets writes status as the node daemon does.
func daemonSets(crr *appsv1alpha1.ContainerRecreateRequest, phase appsv1alpha1.ContainerRecreateRequestPhase, completed *metav1.Time, message ...string) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(crr), crr); err != nil {
			return err
		}
		crr.Status.Phase = phase
		crr.Status.CompletionTime = completed
		crr.Status.Message = strings.Join(message, "")
		return k8sClient.Status().Update(ctx, crr)
	})).To(Succeed())
}

func getCRR(g Gomega, crr *appsv1alpha1.ContainerRecreateRequest) *appsv1alpha1.ContainerRecreateRequest {
	out := &appsv1alpha1.ContainerRecreateRequest{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(crr), out)).To(Succeed())
	return out
}

// expectFailed waits until the manager failed the request with the message (or one of them).
func expectFailed(crr *appsv1alpha1.ContainerRecreateRequest, message string, or ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		got := getCRR(g, crr)
		g.Expect(got.Status.Phase).To(Equal(appsv1alpha1.RecreateFailed))
		g.Expect(got.Status.Message).To(BeElementOf(append(or, message)))
		g.Expect(got.Status.CompletionTime).NotTo(BeNil())
		// The manager writes only the status: the labels stay (the phase says the request ended).
		g.Expect(got.Labels).To(HaveKey(appsv1alpha1.LabelCRRPodUID))
	}, lifeTimeout).Should(Succeed())
}

func expectGone(crr *appsv1alpha1.ContainerRecreateRequest) {
	GinkgoHelper()
	Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(crr), &appsv1alpha1.ContainerRecreateRequest{}))
	}, lifeTimeout).Should(BeTrue())
}

var _ = Describe("ContainerRecreateRequest lifecycle", Ordered, func() {
	var stop func()

	BeforeAll(func() {
		suite.CreateNamespace(lifeNS)
		var err error
		stop, err = testutil.StartManager(ctx, cfg, ctrl.Options{
			Cache: managercache.Options(managercache.Config{OperatorNamespace: "el-operator", Strip: true}),
		}, func(mgr ctrl.Manager) error {
			return (&Reconciler{
				Client:            mgr.GetClient(),
				APIReader:         mgr.GetAPIReader(),
				Recorder:          mgr.GetEventRecorder("containerrecreaterequest-controller"),
				PickupTimeout:     pickup,
				PodCheckInterval:  time.Second,
				StopInFlightLimit: 3 * time.Second,
			}).SetupWithManager(mgr)
		})
		Expect(err).NotTo(HaveOccurred())
	})
	AfterAll(func() { stop() })

	It("fails a request no daemon picked up, naming the node", func() {
		crr := lifeCRR(lifePod("unpicked", false), nil)
		expectFailed(crr, "no node daemon picked up the request within 2s; is the daemon running on node crr-node-1?")
		Eventually(func(g Gomega) {
			list := &eventsv1.EventList{}
			g.Expect(k8sClient.List(ctx, list, client.InNamespace(lifeNS))).To(Succeed())
			g.Expect(eventReasons(list, crr.Name)).To(ContainElement("RecreateFailed"))
		}, lifeTimeout).Should(Succeed())
	})

	It("leaves a picked-up request to the daemon", func() {
		crr := lifeCRR(lifePod("picked", false), nil)
		daemonSets(crr, appsv1alpha1.RecreatePending, nil)
		Consistently(func(g Gomega) {
			got := getCRR(g, crr)
			g.Expect(got.Status.Phase).To(Equal(appsv1alpha1.RecreatePending))
		}, 2*pickup).Should(Succeed())
	})

	It("fails a request whose activeDeadlineSeconds passed", func() {
		crr := lifeCRR(lifePod("slow", false), func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.ActiveDeadlineSeconds = ptr.To[int64](3)
		})
		daemonSets(crr, appsv1alpha1.RecreateRecreating, nil, "container web: stopped containerd://1; waiting for the kubelet")
		expectFailed(crr, "the request did not finish within its active deadline of 3s; "+
			"last status: container web: stopped containerd://1; waiting for the kubelet")
	})

	It("keeps a request past its deadline while its stop is in flight, and fails it once the stop returned", func() {
		crr := lifeCRR(lifePod("stuck-stop", false), func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.ActiveDeadlineSeconds = ptr.To[int64](3)
		})
		setStates := func(inFlight bool, message string) {
			GinkgoHelper()
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(crr), crr); err != nil {
					return err
				}
				crr.Status.Phase, crr.Status.Message = appsv1alpha1.RecreateRecreating, "container web: "+message
				crr.Status.ContainerRecreateStates = []appsv1alpha1.ContainerRecreateState{{Name: "web",
					Phase: appsv1alpha1.RecreateRecreating, ContainerID: "containerd://1", StopInFlight: inFlight, Message: message}}
				return k8sClient.Status().Update(ctx, crr)
			})).To(Succeed())
		}
		By("the daemon began the stop; the runtime hangs past the request's deadline")
		setStates(true, "stopping containerd://1")
		Consistently(func(g Gomega) {
			got := getCRR(g, crr)
			g.Expect(got.Status.Phase).To(Equal(appsv1alpha1.RecreateRecreating))
		}, 5*time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			list := &eventsv1.EventList{}
			g.Expect(k8sClient.List(ctx, list, client.InNamespace(lifeNS))).To(Succeed())
			g.Expect(eventReasons(list, crr.Name)).To(ContainElement(EventStopInFlight))
		}, lifeTimeout).Should(Succeed())

		By("the stop returned with the runtime's timeout")
		setStates(false, "stopping containerd://1 failed, will retry: context deadline exceeded")
		expectFailed(crr, "the request did not finish within its active deadline of 3s; "+
			"last status: container web: stopping containerd://1 failed, will retry: context deadline exceeded")
	})

	It("fails a request whose stop stays in flight past its deadline, grace and limit (a daemon gone)", func() {
		crr := lifeCRR(lifePod("daemon-gone", false), func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.ActiveDeadlineSeconds = ptr.To[int64](3)
			c.Spec.Strategy.TerminationGracePeriodSeconds = ptr.To[int64](2)
		})
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(crr), crr); err != nil {
				return err
			}
			crr.Status.Phase, crr.Status.Message = appsv1alpha1.RecreateRecreating, "container web: stopping containerd://1"
			crr.Status.ContainerRecreateStates = []appsv1alpha1.ContainerRecreateState{{Name: "web",
				Phase: appsv1alpha1.RecreateRecreating, ContainerID: "containerd://1", StopInFlight: true,
				Message: "stopping containerd://1"}}
			return k8sClient.Status().Update(ctx, crr)
		})).To(Succeed())
		// Deadline 3 s, then the grace period (2 s) and the limit (3 s): the daemon never reports.
		expectFailed(crr, "the node daemon's stop of the container was still in flight 5s after the active deadline of 3s; "+
			"no live daemon takes that long, so the request fails and frees its pod's restart budget "+
			"(is the daemon running on node "+lifeNode+"?)")
	})

	It("fails the request of a terminating pod at once", func() {
		pod := lifePod("terminating", true)
		crr := lifeCRR(pod, nil)
		daemonSets(crr, appsv1alpha1.RecreateRecreating, nil)
		// The pod is bound to a node and no kubelet runs here: it stays, terminating.
		Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
		expectFailed(crr, `pod "terminating" is terminating`)
	})

	It("fails a request whose enrolled pod was deleted, at once", func() {
		pod := lifePod("deleted-enrolled", true)
		crr := lifeCRR(pod, nil)
		daemonSets(crr, appsv1alpha1.RecreateRecreating, nil)
		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		// The apiserver marks the pod deleted, then removes it: either event fails the request.
		expectFailed(crr, `pod "deleted-enrolled" no longer exists`, `pod "deleted-enrolled" is terminating`)
	})

	It("fails a request whose pod, outside the cache, was deleted", func() {
		pod := lifePod("deleted-plain", false)
		crr := lifeCRR(pod, nil)
		daemonSets(crr, appsv1alpha1.RecreatePending, nil)
		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		// As above: a read between the deletion mark and the removal sees it terminating.
		expectFailed(crr, `pod "deleted-plain" no longer exists`, `pod "deleted-plain" is terminating`)
	})

	It("fails a request whose pod was replaced by one with a new UID", func() {
		pod := lifePod("replaced", false)
		// Replace the pod before the request exists, so that the controller never sees the gap
		// between the two pods (in which "no longer exists" would be right).
		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		replacement := lifePod("replaced", false)
		crr := lifeCRR(pod, nil)
		expectFailed(crr, `pod "replaced" was replaced by a new pod (UID `+string(replacement.UID)+
			`, the request was for UID `+string(pod.UID)+`)`)
	})

	It("writes nothing to a request the daemon finished, and deletes it after its TTL", func() {
		crr := lifeCRR(lifePod("done", false), func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.TTLSecondsAfterFinished = ptr.To[int32](2)
		})
		daemonSets(crr, appsv1alpha1.RecreateSucceeded, ptr.To(metav1.Now()))
		written := getCRR(Default, crr)
		// Until its TTL the request stays as the daemon left it: no label or status write.
		Consistently(func(g Gomega) {
			got := &appsv1alpha1.ContainerRecreateRequest{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(crr), got); apierrors.IsNotFound(err) {
				return
			}
			g.Expect(got.ResourceVersion).To(Equal(written.ResourceVersion))
		}, "1500ms").Should(Succeed())
		expectGone(crr)
	})

	It("lists unfinished requests by status.phase and a pod's requests by spec.podName (selectable fields)", func() {
		pod := lifePod("selected", false)
		done := lifeCRR(pod, func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.TTLSecondsAfterFinished = ptr.To[int32](600) })
		running := lifeCRR(pod, func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.TTLSecondsAfterFinished = ptr.To[int32](600) })
		daemonSets(done, appsv1alpha1.RecreateSucceeded, ptr.To(metav1.Now()))
		daemonSets(running, appsv1alpha1.RecreateRecreating, nil)
		names := func(opts ...client.ListOption) []string {
			var list appsv1alpha1.ContainerRecreateRequestList
			Expect(k8sClient.List(ctx, &list, append(opts, client.InNamespace(lifeNS))...)).To(Succeed())
			var out []string
			for _, r := range list.Items {
				out = append(out, r.Name)
			}
			return out
		}
		unfinished := names(client.MatchingFieldsSelector{Selector: fields.AndSelectors(
			fields.OneTermNotEqualSelector("status.phase", string(appsv1alpha1.RecreateSucceeded)),
			fields.OneTermNotEqualSelector("status.phase", string(appsv1alpha1.RecreateFailed)))})
		Expect(unfinished).To(ContainElement(running.Name))
		Expect(unfinished).NotTo(ContainElement(done.Name))
		Expect(names(client.MatchingFields{"spec.podName": "selected"})).To(ConsistOf(done.Name, running.Name))
	})

	It("deletes a request with TTL 0 as soon as it finished", func() {
		crr := lifeCRR(lifePod("ttl-zero", false), func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
		})
		daemonSets(crr, appsv1alpha1.RecreateFailed, ptr.To(metav1.Now()))
		expectGone(crr)
	})

	It("counts the TTL from when it saw the request finished, not from the completionTime the daemon stamped on the node's clock", func() {
		pod := lifePod("node-clock", false)
		// A node 10 minutes ahead: its request still goes after its 2 s.
		ahead := lifeCRR(pod, func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.TTLSecondsAfterFinished = ptr.To[int32](2) })
		// A node 10 minutes behind: its request keeps its 300 s (the default), not none.
		behind := lifeCRR(pod, func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.TTLSecondsAfterFinished = nil })
		daemonSets(ahead, appsv1alpha1.RecreateSucceeded, &metav1.Time{Time: time.Now().Add(10 * time.Minute)})
		daemonSets(behind, appsv1alpha1.RecreateSucceeded, &metav1.Time{Time: time.Now().Add(-10 * time.Minute)})
		expectGone(ahead)
		Consistently(func(g Gomega) { getCRR(g, behind) }, "2s").Should(Succeed())
	})

	It("dates a finished request that has no completionTime, so that it expires", func() {
		crr := lifeCRR(lifePod("undated", false), func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.TTLSecondsAfterFinished = ptr.To[int32](1)
		})
		daemonSets(crr, appsv1alpha1.RecreateFailed, nil)
		expectGone(crr)
	})
})

func eventReasons(list *eventsv1.EventList, name string) []string {
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

var _ = Describe("ContainerRecreateRequest lifecycle under a write race", func() {
	It("does not fail as not picked up a request the daemon started since it was read", func() {
		suite.CreateNamespace(lifeNS)
		crr := lifeCRR(lifePod("raced", false), nil)
		stale := crr.DeepCopy()
		// The daemon picks the request up after the controller read it.
		daemonSets(crr, appsv1alpha1.RecreateRecreating, nil, "container web: stopping containerd://1")
		r := &Reconciler{Client: k8sClient, APIReader: k8sClient,
			Clock: clocktesting.NewFakePassiveClock(time.Now()), PickupTimeout: pickup, PodCheckInterval: time.Second}
		// Judged on the stale copy the request was never picked up; the patch conflicts, and judged
		// again on a fresh read it is running.
		msg, next, err := r.failIfStuck(ctx, stale, stale.CreationTimestamp.Add(time.Minute))
		Expect(err).NotTo(HaveOccurred())
		Expect(msg).To(BeEmpty())
		Expect(next).NotTo(BeZero())
		got := getCRR(Default, crr)
		Expect(got.Status.Phase).To(Equal(appsv1alpha1.RecreateRecreating))
		Expect(got.Status.Message).To(Equal("container web: stopping containerd://1"))
	})
})
