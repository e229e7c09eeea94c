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
package wiring

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/heartbeat"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/report"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

const ns = "default"

// targets are the loopback endpoints probes point at: HTTP /ok and /fail, a TCP listener, and
// the test CRI server whose exec of "ok" exits 0 and of anything else exits 1.
type targets struct {
	httpPort, tcpPort int
	cri               *critest.Server
	rt                cri.Runtime
}

func startTargets() *targets {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) })
	srv := httptest.NewServer(mux)
	DeferCleanup(srv.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	dir, err := os.MkdirTemp("", "x")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = os.RemoveAll(dir) })
	cs := &critest.Server{ExecFunc: func(r *runtimeapi.ExecSyncRequest) critest.ExecResult {
		if r.Cmd[0] == "ok" {
			return critest.ExecResult{Stdout: "fine"}
		}
		return critest.ExecResult{Stdout: "broken", ExitCode: 1}
	}}
	ep, err := cs.Start(dir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cs.Close)
	rt, err := cri.Connect(ctx, ep, 5*time.Second)
	Expect(err).NotTo(HaveOccurred())
	_, hp, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	httpPort, _ := strconv.Atoi(hp)
	return &targets{httpPort: httpPort, tcpPort: l.Addr().(*net.TCPAddr).Port, cri: cs, rt: rt}
}

// startDaemon runs the daemon's controllers for nodeName until the spec ends; with changes the
// engine's options before Setup.
func startDaemon(nodeName string, rt cri.Runtime, with ...func(*Options)) *Engine {
	var eng *Engine
	stop, err := testutil.StartManager(ctx, cfg, ctrl.Options{Cache: CacheOptions(nodeName, appsv1alpha1.DefaultOperatorNamespace)},
		func(mgr ctrl.Manager) error {
			o := Options{
				NodeName: nodeName, Namespace: appsv1alpha1.DefaultOperatorNamespace, Runtime: rt, Addresses: &cri.Addresses{Runtime: rt},
				UserAgent: prober.UserAgent("v1.37.2"), Recorder: mgr.GetEventRecorder("enhanced-liveness-daemon"),
				LeaseInterval: time.Second,
			}
			for _, f := range with {
				f(&o)
			}
			var err error
			eng, err = Setup(mgr, o)
			return err
		})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop)
	return eng
}

// createPod creates a running pod bound to nodeName with one container "app" whose container ID
// is containerID ("" leaves the container status out).
func createPod(nodeName, name, containerID string) *corev1.Pod {
	b := testutil.NewPod(ns, name).OnNode(nodeName).Running("127.0.0.1").
		ContainerID("app", containerID).StartedAt(time.Now().Add(-time.Minute))
	pod := b.Create(ctx, k8sClient)
	if containerID == "" {
		// The kubelet has not reported the container yet.
		pod.Status.ContainerStatuses = nil
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
	}
	return pod
}

// createPod is createPod with the pod's sandbox in the test runtime, at 127.0.0.1 (where the
// HTTP and TCP targets listen).
func (tg *targets) createPod(nodeName, name, containerID string) *corev1.Pod {
	pod := createPod(nodeName, name, containerID)
	tg.cri.AddSandbox("sb-"+string(pod.UID), string(pod.UID), "127.0.0.1", false)
	return pod
}

// podProbe gives the pod a sealed probe context with a liveness probe of handler for container
// "app" (the webhook's and the manager's work) and returns its NodePodProbe entry (the mapping
// controller's).
func podProbe(pod *corev1.Pod, handler corev1.ProbeHandler) appsv1alpha1.PodProbe {
	GinkgoHelper()
	probe := corev1.Probe{ProbeHandler: handler, TimeoutSeconds: 1, PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1}
	setProbeContext(pod, probe)
	Expect(k8sClient.Update(ctx, testutil.Seal(pod))).To(Succeed())
	return entryFor(pod)
}

// setProbeContext writes the probe-context annotation with probe for container "app".
func setProbeContext(pod *corev1.Pod, probe corev1.Probe) {
	GinkgoHelper()
	value, err := probecontext.Encode([]probecontext.ContainerProbe{{Name: "app", LivenessProbe: &probe}})
	Expect(err).NotTo(HaveOccurred())
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[appsv1alpha1.AnnotationProbeContext] = value
}

// entryFor is the NodePodProbe entry of pod.
func entryFor(pod *corev1.Pod) appsv1alpha1.PodProbe {
	return appsv1alpha1.PodProbe{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}
}

// createNPP creates npp and, as the manager does, its empty NodePodProbeReport.
func createNPP(npp *appsv1alpha1.NodePodProbe) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, npp)).To(Succeed())
	Expect(k8sClient.Create(ctx, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: npp.Name,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "NodePodProbe",
			Name: npp.Name, UID: npp.UID}}}})).To(Succeed())
}

func getReport(name string) *appsv1alpha1.NodePodProbeReport {
	GinkgoHelper()
	rep := &appsv1alpha1.NodePodProbeReport{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Name: name}, rep)).To(Succeed())
	return rep
}

// getNPP returns the node's NodePodProbe.
func getNPP(name string) *appsv1alpha1.NodePodProbe {
	GinkgoHelper()
	npp := &appsv1alpha1.NodePodProbe{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Name: name}, npp)).To(Succeed())
	return npp
}

// nodeResults is what the manager reads of a node: its report, for the spec of its NodePodProbe.
type nodeResults struct {
	*appsv1alpha1.NodePodProbeReport
	npp *appsv1alpha1.NodePodProbe
}

func getResults(name string) nodeResults {
	GinkgoHelper()
	return nodeResults{NodePodProbeReport: getReport(name), npp: getNPP(name)}
}

// stateOf maps pod name -> reported state of its single probe. A pod of the spec the report
// leaves out passed its last probe (status.probedGeneration): it maps to a bare Succeeded state.
// A pod listed notProbed maps to a NotProbed state with that message.
func stateOf(r nodeResults) map[string]appsv1alpha1.ContainerProbeState {
	out := map[string]appsv1alpha1.ContainerProbeState{}
	for _, ps := range r.Status.PodProbeStatuses {
		if ps.NotProbed != "" {
			out[ps.Name] = appsv1alpha1.ContainerProbeState{State: appsv1alpha1.ProbeNotProbed, Message: ps.NotProbed}
		}
		for _, s := range ps.ProbeStates {
			out[ps.Name] = s
		}
	}
	if r.Status.CompleteFor(r.npp.Generation) {
		for _, pp := range r.npp.Spec.PodProbes {
			if _, listed := out[pp.Name]; !listed {
				out[pp.Name] = appsv1alpha1.ContainerProbeState{Name: probecontext.ProbeName(pp.Name, "app"), State: appsv1alpha1.ProbeSucceeded}
			}
		}
	}
	return out
}

var _ = Describe("node daemon probe engine", func() {
	It("reports correct status for 50 pods with HTTP, TCP and exec probes, and drops removed pods", func() {
		tg := startTargets()
		node := "node-fifty"
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		want := map[string]appsv1alpha1.ProbeState{}
		wantID := map[string]string{}
		for i := range 50 {
			name := fmt.Sprintf("fifty-%02d", i)
			var h corev1.ProbeHandler
			id := fmt.Sprintf("containerd://fifty-%02d", i)
			state := appsv1alpha1.ProbeSucceeded
			switch {
			case i < 20:
				h.HTTPGet = &corev1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(tg.httpPort))}
			case i < 30:
				h.HTTPGet = &corev1.HTTPGetAction{Path: "/fail", Port: intstr.FromInt32(int32(tg.httpPort))}
				state = appsv1alpha1.ProbeFailed
			case i < 40:
				h.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(tg.tcpPort))}
			default:
				cmd := "ok"
				if i >= 45 {
					cmd, state = "fail", appsv1alpha1.ProbeFailed
				}
				h.Exec = &corev1.ExecAction{Command: []string{cmd}}
				id = "containerd://" + tg.cri.AddContainer("sb-"+name, "app")
			}
			pod := tg.createPod(node, name, id)
			if h.Exec != nil {
				tg.cri.SetOwner(cri.TrimContainerID(id), string(pod.UID), "app")
			}
			npp.Spec.PodProbes = append(npp.Spec.PodProbes, podProbe(pod, h))
			want[name], wantID[name] = state, id
		}
		createNPP(npp)
		eng := startDaemon(node, tg.rt)

		Eventually(func(g Gomega) {
			got := getResults(node)
			g.Expect(got.Status.ProbedPods).To(BeEquivalentTo(50))
			g.Expect(got.Status.FailingProbes).To(BeEquivalentTo(15))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.npp.Generation))
			states := stateOf(got)
			g.Expect(got.Status.PodProbeStatuses).To(HaveLen(15), "only the failing pods are listed")
			for name, st := range want {
				g.Expect(states[name].State).To(Equal(st), name)
				if st == appsv1alpha1.ProbeSucceeded {
					continue // passing: not listed
				}
				g.Expect(states[name].ContainerID).To(Equal(wantID[name]), name)
				g.Expect(states[name].LastProbeTime.Time.IsZero()).To(BeFalse())
				g.Expect(states[name].LastTransitionTime.Time.IsZero()).To(BeFalse())
			}
			g.Expect(states["fifty-25"].Message).To(Equal("HTTP probe failed with statuscode: 500"))
			// The cluster-scoped status carries the exit code, never the command's output.
			g.Expect(states["fifty-47"].Message).To(Equal("exit code 1"))
		}).WithTimeout(20 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		Expect(eng.Probes.WorkerCount()).To(Equal(50))

		By("a Warning Unhealthy event on a failing pod, in the pod's namespace, with the command's output")
		Eventually(func(g Gomega) {
			var evs eventsv1.EventList
			g.Expect(k8sClient.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
			found := map[string]bool{}
			for _, e := range evs.Items {
				if e.Reason == "Unhealthy" && e.Type == corev1.EventTypeWarning && e.Regarding.FieldPath == "spec.containers{app}" {
					found[e.Regarding.Name+": "+e.Note] = true
				}
			}
			g.Expect(found).To(HaveKey("fifty-25: Liveness probe failed: HTTP probe failed with statuscode: 500"))
			g.Expect(found).To(HaveKey("fifty-47: Liveness probe failed: broken"))
		}).WithTimeout(10 * time.Second).Should(Succeed())

		By("removing 10 pods from the spec")
		cur := getNPP(node)
		cur.Spec.PodProbes = cur.Spec.PodProbes[10:]
		Expect(k8sClient.Update(ctx, cur)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getResults(node)
			g.Expect(got.Status.ProbedPods).To(BeEquivalentTo(40))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.npp.Generation))
			states := stateOf(got)
			g.Expect(states).NotTo(HaveKey("fifty-00"))
			g.Expect(states).NotTo(HaveKey("fifty-09"))
			g.Expect(states).To(HaveKey("fifty-10"))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(eng.Probes.WorkerCount).Should(Equal(40))
	})

	It("coalesces a probe flipping 200 times within one second into a handful of writes", func() {
		node := "node-flip"
		pod := createPod(node, "flip", "") // no container status: its worker stays idle
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{podProbe(pod, corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(1)}})}
		createNPP(npp)
		eng := startDaemon(node, nil)
		Eventually(func() int64 { return getReport(node).Status.ObservedGeneration }).Should(BeEquivalentTo(1))
		Eventually(eng.Probes.WorkerCount).Should(Equal(1))
		time.Sleep(time.Second) // let the generation write settle
		before := eng.Status.Writes()

		// What the worker reports on each threshold crossing, 200 times in one second.
		key := results.Key{PodUID: pod.UID, Container: "app", Probe: "flip-app"}
		start := time.Now()
		for i := range 200 {
			// The last flip is a failure: a passing probe is not listed, a failing one with its message.
			st, write := appsv1alpha1.ProbeFailed, results.WriteSoon
			if i%2 == 0 {
				st, write = appsv1alpha1.ProbeSucceeded, results.WriteInWindow
			}
			eng.Probes.Results.Set(key, st, "containerd://flip", fmt.Sprintf("flip %d", i), time.Now(), write)
			time.Sleep(5 * time.Millisecond)
		}
		elapsed := time.Since(start)
		Eventually(func(g Gomega) {
			s := stateOf(getResults(node))["flip"]
			g.Expect(s.State).To(Equal(appsv1alpha1.ProbeFailed))
			g.Expect(s.Message).To(Equal("flip 199"))
		}).WithTimeout(5 * time.Second).Should(Succeed())
		time.Sleep(time.Second)
		writes := eng.Status.Writes() - before
		AddReportEntry("status writes for 200 flips", writes)
		_, _ = fmt.Fprintf(GinkgoWriter, "200 flips in %v -> %d status writes\n", elapsed, writes)
		// At most two writes per window (a failure may be written early: report.DefaultFailureWindow),
		// plus the one that ends the flipping.
		windows := int64(math.Ceil(float64(elapsed) / float64(report.DefaultWriteWindow)))
		Expect(writes).To(BeNumerically(">=", 1))
		Expect(writes).To(BeNumerically("<=", 2*windows+1))
	})

	It("renews its Lease and never touches another node's NodePodProbe or report", func() {
		tg := startTargets()
		other := "node-other"
		otherPod := tg.createPod(other, "other-pod", "containerd://other")
		otherNPP := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: other}}
		otherNPP.Spec.PodProbes = []appsv1alpha1.PodProbe{podProbe(otherPod, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/fail", Port: intstr.FromInt32(int32(tg.httpPort))}})}
		createNPP(otherNPP)
		otherRV, otherReportRV := getNPP(other).ResourceVersion, getReport(other).ResourceVersion

		node := "node-lease"
		pod := tg.createPod(node, "lease-pod", "containerd://lease")
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{podProbe(pod, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(tg.httpPort))}})}
		createNPP(npp)
		eng := startDaemon(node, tg.rt)

		lease := &coordinationv1.Lease{}
		key := types.NamespacedName{Namespace: appsv1alpha1.DefaultOperatorNamespace, Name: heartbeat.LeaseName(node)}
		Eventually(func() error { return k8sClient.Get(ctx, key, lease) }).Should(Succeed())
		Expect(*lease.Spec.HolderIdentity).To(Equal(node))
		Expect(*lease.Spec.LeaseDurationSeconds).To(BeEquivalentTo(appsv1alpha1.DaemonLeaseDuration))
		first := lease.Spec.RenewTime.Time
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, lease)).To(Succeed())
			g.Expect(lease.Spec.RenewTime.Time.After(first)).To(BeTrue())
		}).WithTimeout(5 * time.Second).Should(Succeed())

		Eventually(func() appsv1alpha1.ProbeState { return stateOf(getResults(node))["lease-pod"].State }).
			WithTimeout(10 * time.Second).Should(Equal(appsv1alpha1.ProbeSucceeded))
		Consistently(func(g Gomega) {
			g.Expect(getNPP(other).ResourceVersion).To(Equal(otherRV))
			o := getReport(other)
			g.Expect(o.ResourceVersion).To(Equal(otherReportRV))
			g.Expect(o.Status.PodProbeStatuses).To(BeEmpty())
		}).WithTimeout(2 * time.Second).Should(Succeed())
		Expect(eng.Probes.WorkerCount()).To(Equal(1))
	})

	It("recomputes from a fresh read when its patch conflicts, and flushes on shutdown", func() {
		node := "node-conflict"
		pod := createPod(node, "conflict-pod", "")
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		npp.Spec.PodProbes = []appsv1alpha1.PodProbe{podProbe(pod, corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(1)}})}
		createNPP(npp)
		var eng *Engine
		stop, err := testutil.StartManager(ctx, cfg, ctrl.Options{Cache: CacheOptions(node, appsv1alpha1.DefaultOperatorNamespace)},
			func(mgr ctrl.Manager) error {
				var err error
				eng, err = Setup(mgr, Options{NodeName: node, Namespace: appsv1alpha1.DefaultOperatorNamespace, UserAgent: "kube-probe/1.37"})
				return err
			})
		Expect(err).NotTo(HaveOccurred())
		stopped := false
		defer func() {
			if !stopped {
				stop()
			}
		}()
		key := results.Key{PodUID: pod.UID, Container: "app", Probe: "conflict-pod-app"}
		eng.Probes.Results.Set(key, appsv1alpha1.ProbeUnknown, "containerd://c1", "", time.Now(), results.WriteInWindow)
		Eventually(func() string { return stateOf(getResults(node))["conflict-pod"].ContainerID }).Should(Equal("containerd://c1"))

		By("another writer changing the report behind the daemon's cache")
		// That writer reads fresh and retries its own conflicts: the daemon may write between its
		// read and its update (its workers probe meanwhile).
		writeMessage := func(msg string) {
			Eventually(func() error {
				cur := getReport(node)
				cur.Status.PodProbeStatuses[0].ProbeStates[0].Message = msg
				return k8sClient.Status().Update(ctx, cur)
			}).WithTimeout(5 * time.Second).Should(Succeed())
		}
		writeMessage("written by someone else")
		eng.Probes.Results.Set(key, appsv1alpha1.ProbeFailed, "containerd://c1", "boom", time.Now(), results.WriteSoon)
		Eventually(func(g Gomega) {
			s := stateOf(getResults(node))["conflict-pod"]
			g.Expect(s.State).To(Equal(appsv1alpha1.ProbeFailed))
			g.Expect(s.Message).To(Equal("boom"))
		}).WithTimeout(5 * time.Second).Should(Succeed())

		By("a writer whose first read is stale: the patch conflicts, is recomputed from a fresh read and lands")
		stale := getReport(node)
		stale.Status.PodProbeStatuses[0].ProbeStates[0].Message = "an older message the cache still shows"
		writeMessage("written by someone else again")
		reads, freshReads := 0, 0
		staleClient, err := client.NewWithWatch(cfg, client.Options{Scheme: testutil.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		w := &report.Writer{
			Client: interceptor.NewClient(staleClient, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*appsv1alpha1.NodePodProbeReport); !ok {
						return c.Get(ctx, key, obj, opts...)
					}
					reads++
					if reads == 1 {
						stale.DeepCopyInto(obj.(*appsv1alpha1.NodePodProbeReport))
						return nil
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}),
			APIReader: &countingReader{Reader: k8sClient, n: &freshReads}, NodeName: node, Results: eng.Probes.Results,
		}
		w.SetPlan(&report.Plan{Generation: getNPP(node).Generation, Pods: []report.PlannedPod{{Name: pod.Name, Namespace: ns, UID: pod.UID,
			Probes: []report.PlannedProbe{{Key: key, IntervalSeconds: 10}}}}})
		Expect(w.Flush(ctx)).To(Succeed())
		Expect(w.Writes()).To(BeEquivalentTo(1))
		Expect([]int{reads, freshReads}).To(Equal([]int{1, 1}), "one stale cached read, then one fresh read after the conflict")
		s := stateOf(getResults(node))["conflict-pod"]
		Expect(s.Message).To(Equal("boom"))

		By("a transition right before shutdown is still written")
		eng.Probes.Results.Set(key, appsv1alpha1.ProbeUnknown, "containerd://c2", "", time.Now(), results.WriteInWindow)
		stop()
		stopped = true
		s = stateOf(getResults(node))["conflict-pod"]
		Expect(s.ContainerID).To(Equal("containerd://c2"))
		Expect(s.State).To(Equal(appsv1alpha1.ProbeUnknown))
	})
})

// countingReader counts the reads that go straight to the apiserver.
type countingReader struct {
	client.Reader
	n *int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	*r.n++
	return r.Reader.Get(ctx, key, obj, opts...)
}
