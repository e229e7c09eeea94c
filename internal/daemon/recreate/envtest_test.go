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

package recreate

import (
	"context"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// phaseLog records, from a watch, every phase change of the requests of one namespace, in order.
type phaseLog struct {
	mu      sync.Mutex
	entries []string // "name=phase"
	last    map[string]appsv1alpha1.ContainerRecreateRequestPhase
	updates map[string]int // writes to each request after its creation
}

func watchPhases(ctx context.Context, ns string) *phaseLog {
	w, err := k8sClient.Watch(ctx, &appsv1alpha1.ContainerRecreateRequestList{}, client.InNamespace(ns))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	l := &phaseLog{last: map[string]appsv1alpha1.ContainerRecreateRequestPhase{}, updates: map[string]int{}}
	go func() {
		for ev := range w.ResultChan() {
			crr, ok := ev.Object.(*appsv1alpha1.ContainerRecreateRequest)
			if !ok {
				continue
			}
			l.mu.Lock()
			if ev.Type == watch.Modified {
				l.updates[crr.Name]++
			}
			if crr.Status.Phase == "" {
				l.mu.Unlock()
				continue
			}
			if l.last[crr.Name] != crr.Status.Phase {
				l.last[crr.Name] = crr.Status.Phase
				l.entries = append(l.entries, crr.Name+"="+string(crr.Status.Phase))
			}
			l.mu.Unlock()
		}
	}()
	return l
}

// of returns the phases one request went through; all returns every change in order.
func (l *phaseLog) of(name string) []string {
	var out []string
	for _, e := range l.all() {
		if len(e) > len(name) && e[:len(name)+1] == name+"=" {
			out = append(out, e[len(name)+1:])
		}
	}
	return out
}

// writes is how many times the request was written after its creation.
func (l *phaseLog) writes(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.updates[name]
}

func (l *phaseLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// newRequest creates a request as the webhook would have completed it, from the pod's status.
func newRequest(pod *corev1.Pod, name, node string, containers ...string) *appsv1alpha1.ContainerRecreateRequest {
	r := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: name, Labels: map[string]string{
			appsv1alpha1.LabelCRRNodeName: node, appsv1alpha1.LabelCRRPodUID: string(pod.UID)}},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod.Name},
	}
	for _, c := range containers {
		for _, s := range pod.Status.ContainerStatuses {
			if s.Name == c {
				r.Spec.Containers = append(r.Spec.Containers, appsv1alpha1.ContainerRecreateRequestContainer{Name: c,
					StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: s.ContainerID}})
			}
		}
	}
	Expect(k8sClient.Create(envCtx, r)).To(Succeed())
	return r
}

func getRequest(r *appsv1alpha1.ContainerRecreateRequest) func(Gomega) *appsv1alpha1.ContainerRecreateRequest {
	return func(g Gomega) *appsv1alpha1.ContainerRecreateRequest {
		out := &appsv1alpha1.ContainerRecreateRequest{}
		g.Expect(k8sClient.Get(envCtx, client.ObjectKeyFromObject(r), out)).To(Succeed())
		return out
	}
}

func phaseOf(r *appsv1alpha1.ContainerRecreateRequest) func(Gomega) appsv1alpha1.ContainerRecreateRequestPhase {
	return func(g Gomega) appsv1alpha1.ContainerRecreateRequestPhase {
		return getRequest(r)(g).Status.Phase
	}
}

func stoppedIDs() []string {
	var ids []string
	for _, c := range criServer.Calls("StopContainer") {
		ids = append(ids, "critest://"+c.ContainerID)
	}
	return ids
}

var _ = Describe("CRR executor on a node", func() {
	var ns string
	BeforeEach(func() {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "crr-"}}
		Expect(k8sClient.Create(envCtx, n)).To(Succeed())
		ns = n.Name
	})

	It("restarts a container: Recreating, then Succeeded with per-container state and a Killing event on the pod", func() {
		phases := watchPhases(envCtx, ns)
		pod := kubelet.StartPod(envCtx, ns, "web", envNode, "app")
		old := pod.Status.ContainerStatuses[0].ContainerID
		r := newRequest(pod, "restart-app", envNode, "app")

		Eventually(phaseOf(r)).WithTimeout(30 * time.Second).Should(Equal(appsv1alpha1.RecreateSucceeded))
		done := getRequest(r)(Default)
		Expect(done.Status.CompletionTime).NotTo(BeNil())
		Expect(done.Status.Message).To(Equal("all 1 container(s) restarted"))
		Expect(done.Status.ContainerRecreateStates).To(HaveLen(1))
		st := done.Status.ContainerRecreateStates[0]
		Expect(st.Name).To(Equal("app"))
		Expect(st.Phase).To(Equal(appsv1alpha1.RecreateSucceeded))
		Expect(st.IsKilled).To(BeTrue())
		Expect(st.ContainerID).To(Equal(old))

		now := &corev1.Pod{}
		Expect(k8sClient.Get(envCtx, client.ObjectKeyFromObject(pod), now)).To(Succeed())
		Expect(now.Status.ContainerStatuses[0].ContainerID).NotTo(Equal(old))
		Expect(st.Message).To(Equal("stopped " + old + "; new container " + now.Status.ContainerStatuses[0].ContainerID + " running"))
		Expect(stoppedIDs()).To(ContainElement(old))
		Eventually(phases.of).WithArguments("restart-app").Should(Equal([]string{"Recreating", "Succeeded"}))
		// The kubelet started the new container within the return's window: the stop's return
		// went out with the success, two status writes in all.
		Consistently(phases.writes).WithArguments("restart-app").WithTimeout(2 * time.Second).Should(Equal(2))

		Eventually(func(g Gomega) []string {
			var evs eventsv1.EventList
			g.Expect(k8sClient.List(envCtx, &evs, client.InNamespace(ns))).To(Succeed())
			var notes []string
			for _, e := range evs.Items {
				if e.Regarding.Kind == "Pod" && e.Regarding.Name == "web" && e.Reason == ReasonKilling {
					notes = append(notes, e.ReportingController+": "+e.Note)
				}
			}
			return notes
		}).WithTimeout(30 * time.Second).Should(ContainElement(EventRecorderName + ": Stopping container app by ContainerRecreateRequest restart-app"))
	})

	It("runs two requests of one pod one after the other; the second waits in Pending", func() {
		phases := watchPhases(envCtx, ns)
		kubelet.Hold()
		DeferCleanup(kubelet.Release, envCtx)
		pod := kubelet.StartPod(envCtx, ns, "two", envNode, "a", "b")
		a1, b1 := pod.Status.ContainerStatuses[0].ContainerID, pod.Status.ContainerStatuses[1].ContainerID

		first := newRequest(pod, "first", envNode, "a")
		Eventually(func(g Gomega) bool {
			s := getRequest(first)(g).Status.ContainerRecreateStates
			return len(s) == 1 && s[0].IsKilled
		}).WithTimeout(30 * time.Second).Should(BeTrue())
		time.Sleep(time.Second) // creation timestamps have one-second resolution: keep first the older
		second := newRequest(pod, "second", envNode, "b")
		Eventually(func(g Gomega) string {
			got := getRequest(second)(g)
			return string(got.Status.Phase) + ": " + got.Status.Message
		}).WithTimeout(30 * time.Second).Should(Equal("Pending: waiting for ContainerRecreateRequest first of the same pod to finish"))
		Expect(stoppedIDs()).To(ContainElement(a1))
		Expect(stoppedIDs()).NotTo(ContainElement(b1))

		kubelet.Release(envCtx)
		Eventually(phaseOf(second)).WithTimeout(30 * time.Second).Should(Equal(appsv1alpha1.RecreateSucceeded))
		Expect(phaseOf(first)(Default)).To(Equal(appsv1alpha1.RecreateSucceeded))
		Expect(stoppedIDs()).To(ContainElement(b1))
		for _, c := range []struct {
			r    *appsv1alpha1.ContainerRecreateRequest
			name string
			id   string
		}{{first, "a", a1}, {second, "b", b1}} {
			st := getRequest(c.r)(Default).Status.ContainerRecreateStates
			Expect(st).To(HaveLen(1))
			Expect(st[0]).To(And(HaveField("Name", c.name), HaveField("Phase", appsv1alpha1.RecreateSucceeded),
				HaveField("IsKilled", true), HaveField("ContainerID", c.id)))
		}

		Eventually(phases.of).WithArguments("second").Should(Equal([]string{"Pending", "Recreating", "Succeeded"}))
		Expect(phases.of("first")).To(Equal([]string{"Recreating", "Succeeded"}))
		all := phases.all()
		Expect(slices.Index(all, "first=Succeeded")).To(BeNumerically("<", slices.Index(all, "second=Recreating")),
			"the second request started only after the first finished: %v", all)
	})

	It("leaves the request of a pod being deleted to the manager", func() {
		kubelet.Hold()
		DeferCleanup(kubelet.Release, envCtx)
		pod := kubelet.StartPod(envCtx, ns, "going", envNode, "app")
		r := newRequest(pod, "gone", envNode, "app")
		Eventually(func(g Gomega) appsv1alpha1.ContainerRecreateRequestStatus {
			return getRequest(r)(g).Status
		}).WithTimeout(30 * time.Second).Should(HaveField("ContainerRecreateStates", ConsistOf(HaveField("IsKilled", BeTrue()))))
		Expect(k8sClient.Delete(envCtx, pod)).To(Succeed()) // no kubelet: the pod stays, terminating
		before := getRequest(r)(Default).ResourceVersion
		kubelet.Release(envCtx) // the container comes back: still nothing for the daemon to do
		Consistently(func(g Gomega) string {
			return getRequest(r)(g).ResourceVersion
		}).WithTimeout(3*time.Second).Should(Equal(before), "the manager, not the daemon, fails the request of a terminating pod")
	})

	It("ignores a request for another node", func() {
		other := kubelet.StartPod(envCtx, ns, "elsewhere", "node-b", "app")
		foreign := newRequest(other, "foreign", "node-b", "app")
		pod := kubelet.StartPod(envCtx, ns, "local", envNode, "app")
		local := newRequest(pod, "local", envNode, "app")

		Eventually(phaseOf(local)).WithTimeout(30 * time.Second).Should(Equal(appsv1alpha1.RecreateSucceeded))
		Consistently(phaseOf(foreign)).WithTimeout(2 * time.Second).Should(BeEmpty())
		Expect(stoppedIDs()).NotTo(ContainElement(other.Status.ContainerStatuses[0].ContainerID))
	})
})
