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
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
)

// A host-network pod's sandbox has no address of its own: the daemon dials its node's, as the
// kubelet does (row 16a of docs/probe-semantics.md). On node B, whose network namespace and
// address are its own, the app records the address each probe was sent to.

// appArrivals is what the app's GET /admin/state says of one check (see test/e2e/app).
type appArrivals struct {
	Count    int64  `json:"count"`
	LastAddr string `json:"lastAddr"`
}

type appStateReply struct {
	HTTPProbes appArrivals `json:"httpProbes"`
	TCPChecks  appArrivals `json:"tcpChecks"`
}

// appState reads the app's /admin/state on its HTTP port.
func appState(g Gomega, p corev1.Pod) appStateReply {
	hc := &http.Client{Timeout: 3 * time.Second}
	resp, err := hc.Get(fmt.Sprintf("http://%s/admin/state", net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(appHTTPPort(&p))))))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	var s appStateReply
	g.Expect(json.NewDecoder(resp.Body).Decode(&s)).To(Succeed())
	return s
}

// hostNetCheck is one kind of probe of a host-network app listening from port on.
type hostNetCheck struct {
	probe func(port int32) *corev1.Probe
	// portOf is the port the probe dials; seen what the app counted of it.
	portOf func(port int32) int32
	seen   func(appStateReply) appArrivals
}

var (
	hostNetHTTP = hostNetCheck{
		probe: func(port int32) *corev1.Probe {
			return probeWith(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(port)}})
		},
		portOf: func(port int32) int32 { return port },
		seen:   func(s appStateReply) appArrivals { return s.HTTPProbes },
	}
	hostNetTCP = hostNetCheck{
		probe: func(port int32) *corev1.Probe {
			return probeWith(corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port + 1)}})
		},
		portOf: func(port int32) int32 { return port + 1 },
		seen:   func(s appStateReply) appArrivals { return s.TCPChecks },
	}
)

// expectProbedAt waits until the app has been probed a few times, the last at addr.
func expectProbedAt(check hostNetCheck, p corev1.Pod, addr string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		a := check.seen(appState(g, p))
		g.Expect(a.Count).To(BeNumerically(">=", 3), "%s probed", p.Name)
		g.Expect(a.LastAddr).To(Equal(addr), "the address %s's probe dialled", p.Name)
	}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Succeed())
}

var _ = Describe("a host-network pod on node B, probed at its node's address", Serial, func() {
	DescribeTable("passes its probe at node B's InternalIP, and its hang is restarted through a CRR as the kubelet restarts its native twin",
		func(kind string, check hostNetCheck, port int32) {
			_, nodeB := twoNodes()
			ip := nodeIP(nodeB)
			ns := newNamespace("hostnet")
			// Ports far from the node's own (kubelet 30248/30250, kube-proxy 30249/30256, the
			// daemon 10290/10291) and below the ephemeral range; the native twin takes the next three.
			nativePort := port + 3
			deployApp(ns, app{name: "web", replicas: 1, probe: check.probe(port), enrolled: true, node: nodeB, hostNetworkPort: port})
			deployApp(ns, app{name: "native", replicas: 1, probe: check.probe(nativePort), node: nodeB, hostNetworkPort: nativePort})
			pod, native := onlyPod(ns, "web"), onlyPod(ns, "native")

			By("both use node B's network: status.podIP is its InternalIP " + ip)
			for _, p := range []corev1.Pod{pod, native} {
				Expect(p.Spec.HostNetwork).To(BeTrue())
				Expect(p.Status.PodIP).To(Equal(ip), "%s's status.podIP", p.Name)
			}
			Expect(pod.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, appsv1alpha1.TrueValue))
			Expect(pod.Spec.Containers[0].LivenessProbe).To(BeNil(), "the enrolled pod's probe is the daemon's alone")

			By("the daemon's " + kind + " probe reaches the enrolled app at the node's address, as the kubelet's reaches the native one")
			expectProbedAt(check, pod, net.JoinHostPort(ip, strconv.Itoa(int(check.portOf(port)))))
			expectProbedAt(check, native, net.JoinHostPort(ip, strconv.Itoa(int(check.portOf(nativePort)))))

			By("node B's report is complete for the NodePodProbe naming the pod and lists it not: it passes")
			Eventually(func(g Gomega) {
				npp, rep := &appsv1alpha1.NodePodProbe{}, &appsv1alpha1.NodePodProbeReport{}
				g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: nodeB}, npp)).To(Succeed())
				g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: nodeB}, rep)).To(Succeed())
				var named bool
				for _, e := range npp.Spec.PodProbes {
					named = named || e.UID == pod.UID
				}
				g.Expect(named).To(BeTrue(), "node B's NodePodProbe names %s", pod.Name)
				g.Expect(rep.Status.CompleteFor(npp.Generation)).To(BeTrue(), "the report is complete for that spec")
				g.Expect(rep.Status.Pod(pod.UID)).To(BeNil(), "%s passes: the report lists it not", pod.Name)
			}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Succeed())
			Expect(hasEvent(ns, pod.Name, prober.ReasonPodIPMismatch, daemonReporter, "")()).To(BeFalse(),
				"status.podIP is the address the daemon dials: no PodIPMismatch")
			Expect(hasEvent(ns, pod.Name, prober.ReasonUnhealthy, daemonReporter, "errored")()).To(BeFalse(),
				"no probe errored (a host-network sandbox reports no address of its own)")

			By("both hang; the enrolled one is restarted through a CRR within threshold × period + 10 s")
			probe := check.probe(port)
			limit := time.Duration(probe.FailureThreshold*probe.PeriodSeconds)*time.Second + 10*time.Second
			tn := timeToRestart(ns, native, 90*time.Second)
			te := timeToRestart(ns, pod, limit)
			expectRestartedByOperator(ns, pod)
			GinkgoWriter.Printf("host-network pod on node B, %s probe: enrolled hang restarted after %s, native after %s\n",
				kind, te.Round(100*time.Millisecond), tn.Round(100*time.Millisecond))
			appendStormReport("host-network pod on node B, %s probe at the node's address: enrolled hang restarted after %s, native after %s",
				kind, te.Round(100*time.Millisecond), tn.Round(100*time.Millisecond))
		},
		Entry("HTTP", "HTTP", hostNetHTTP, int32(18780)),
		Entry("TCP", "TCP", hostNetTCP, int32(18786)),
	)
})
