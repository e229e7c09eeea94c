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
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// The liveness guarantee on the real node: what one tenant does never leaves another tenant's
// hang unrestarted, each beside the same workload left to the kubelet.

// warnings collects the admission warnings of the requests made with a client built on it.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// widePod is an opted-in pod of n app containers on the node, each on its own ports with a TCP
// liveness probe: more probes than one NodePodProbe entry may hold when n > MaxProbesPerPod.
func widePod(ns, name, node string, n int) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{appsv1alpha1.AnnotationEnabled: appsv1alpha1.TrueValue}},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](2),
			NodeSelector: map[string]string{corev1.LabelHostname: node}},
	}
	for i := range n {
		base := 20000 + 3*i
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name: fmt.Sprintf("c%d", i), Image: appImage, ImagePullPolicy: corev1.PullNever,
			Env: []corev1.EnvVar{{Name: "HTTP_PORT", Value: strconv.Itoa(base)},
				{Name: "TCP_PORT", Value: strconv.Itoa(base + 1)}, {Name: "GRPC_PORT", Value: strconv.Itoa(base + 2)}},
			LivenessProbe: &corev1.Probe{PeriodSeconds: 10, FailureThreshold: 3, TimeoutSeconds: 1,
				ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(base + 1))}}},
		})
	}
	return p
}

// timeToRestart makes the pod sick and returns how long until its app container's restart
// count went up.
func timeToRestart(ns string, pod corev1.Pod, limit time.Duration) time.Duration {
	before := containerStatus(&pod, appContainer).RestartCount
	start := time.Now()
	setSick(pod, true)
	Eventually(restartCount(ns, pod.Name)).WithPolling(250*time.Millisecond).WithTimeout(limit).
		Should(BeNumerically(">", before), "%s/%s restarted", ns, pod.Name)
	return time.Since(start)
}

var _ = Describe("a pod the NodePodProbe cannot carry, beside another namespace's hang", Serial, func() {
	It("keeps the wide pod's native probes with a warning; the other namespace's hang is restarted as natively", func() {
		wideNS := newNamespace("wide")
		seen := &warnings{}
		cfg := restConfig()
		cfg.WarningHandler = seen
		wcs, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())

		n := appsv1alpha1.MaxProbesPerPod + 1
		node := realNodes()[0]
		By(fmt.Sprintf("creating an opted-in pod with %d probed containers in %s on %s", n, wideNS, node))
		wide, err := wcs.CoreV1().Pods(wideNS).Create(context.Background(), widePod(wideNS, "wide", node, n), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(seen.all()).To(ContainElement(And(ContainSubstring("not enrolled"),
			ContainSubstring(fmt.Sprintf("at most %d", appsv1alpha1.MaxProbesPerPod)))), "the admission warning says why")
		Expect(wide.Labels).NotTo(HaveKey(appsv1alpha1.LabelEnrolled))
		Expect(wide.Annotations).NotTo(HaveKey(appsv1alpha1.AnnotationProbeContext))
		for _, c := range wide.Spec.Containers {
			Expect(c.LivenessProbe).NotTo(BeNil(), "container %s keeps its native probe", c.Name)
		}
		Eventually(func() corev1.PodPhase { return getPod(wideNS, "wide").Status.Phase }).
			WithTimeout(180*time.Second).Should(Equal(corev1.PodRunning), "the wide pod runs on the node")

		ns := newNamespace("beside-wide")
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true, node: node})
		deployApp(ns, app{name: "native", replicas: 1, probe: httpProbe(), node: node})
		pod, native := onlyPod(ns, "web"), onlyPod(ns, "native")

		By("both hang; the enrolled one is restarted through a CRR within threshold × period + 10 s")
		limit := time.Duration(httpProbe().FailureThreshold*httpProbe().PeriodSeconds)*time.Second + 10*time.Second
		tn := timeToRestart(ns, native, 90*time.Second)
		te := timeToRestart(ns, pod, limit)
		expectRestartedByOperator(ns, pod)
		appendStormReport("beside a %d-probe pod of another namespace: enrolled hang restarted after %s, native after %s",
			n, te.Round(100*time.Millisecond), tn.Round(100*time.Millisecond))
	})
})

var _ = Describe("a namespace whose probes would fill its node's NodePodProbe, beside another namespace's hang", Serial, func() {
	It("names the 30 pods with ~60 KB exec probes and probes them; the other namespace's hang is restarted as natively", func() {
		nodeA, _ := twoNodes()
		heavyNS := newNamespace("heavy")
		// Each probe context is about 60 KB (under the 64 KiB limit): 30 of them made 1.8 MB,
		// which etcd refused when the NodePodProbe carried each pod's probes (before 2026-12-05). A 10 s
		// period keeps 30 execs light on the node.
		heavy := execProbe(strings.Repeat("x", 60_000))
		heavy.PeriodSeconds = 10
		By(fmt.Sprintf("namespace %s: 30 pods on %s, each with a ~60 KB exec liveness probe", heavyNS, nodeA))
		deployApp(heavyNS, app{name: "heavy", replicas: 30, probe: heavy, enrolled: true, node: nodeA})
		heavyPods := appPods(heavyNS, "heavy")

		By("the node's NodePodProbe names all 30, Mapped is not False, and the daemon probed them")
		Eventually(func(g Gomega) {
			npp, rep := &appsv1alpha1.NodePodProbe{}, &appsv1alpha1.NodePodProbeReport{}
			g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: nodeA}, npp)).To(Succeed())
			g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: nodeA}, rep)).To(Succeed())
			named := map[types.UID]bool{}
			for _, e := range npp.Spec.PodProbes {
				named[e.UID] = true
			}
			for _, p := range heavyPods {
				g.Expect(named).To(HaveKey(p.UID), "%s is named", p.Name)
				g.Expect(rep.Status.Pod(p.UID)).To(BeNil(), "%s passes: the report lists it not", p.Name)
			}
			g.Expect(meta.IsStatusConditionFalse(npp.Status.Conditions, appsv1alpha1.ConditionMapped)).To(BeFalse())
			g.Expect(rep.Status.CompleteFor(npp.Generation)).To(BeTrue(), "the report is complete for the spec naming them")
			g.Expect(rep.Status.ProbedPods).To(BeNumerically(">=", 30))
		}).WithTimeout(120 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
		Expect(eventCount(heavyNS, "LivenessProbeNotMapped", "")).To(BeZero())

		ns := newNamespace("beside-heavy")
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true, node: nodeA})
		deployApp(ns, app{name: "native", replicas: 1, probe: httpProbe(), node: nodeA})
		pod, native := onlyPod(ns, "web"), onlyPod(ns, "native")

		By("both hang; the enrolled one is restarted through a CRR within threshold × period + 10 s")
		limit := time.Duration(httpProbe().FailureThreshold*httpProbe().PeriodSeconds)*time.Second + 10*time.Second
		tn := timeToRestart(ns, native, 90*time.Second)
		te := timeToRestart(ns, pod, limit)
		expectRestartedByOperator(ns, pod)
		for _, p := range heavyPods {
			Expect(restartCount(heavyNS, p.Name)()).To(BeZero(), "%s passes its exec probe: never restarted", p.Name)
		}
		appendStormReport("beside 30 pods with ~60 KB exec probes of another namespace: enrolled hang restarted after %s, native after %s",
			te.Round(100*time.Millisecond), tn.Round(100*time.Millisecond))
	})
})

// flap makes the pod fail single probe runs again and again (sick for less than one period of 1 s,
// then healthy for 3 s) until stop is closed.
func flap(p corev1.Pod, stop <-chan struct{}) {
	defer GinkgoRecover()
	hc := &http.Client{Timeout: 2 * time.Second}
	post := func(path string) {
		resp, err := hc.Post(fmt.Sprintf("http://%s:8080%s", p.Status.PodIP, path), "text/plain", nil)
		if err == nil {
			_ = resp.Body.Close()
		}
	}
	for {
		post("/admin/sick")
		time.Sleep(700 * time.Millisecond)
		post("/admin/healthy")
		select {
		case <-stop:
			return
		case <-time.After(3 * time.Second):
		}
	}
}

var _ = Describe("a hang in a 2-replica Deployment whose sibling fails single probe runs", func() {
	It("restarts the hang within threshold × period + 10 s, as the kubelet does", func() {
		ns := newNamespace("flaky-sibling")
		deployApp(ns, app{name: "web", replicas: 2, probe: httpProbe(), enrolled: true})
		deployApp(ns, app{name: "native", replicas: 2, probe: httpProbe()})
		enrolled, native := appPods(ns, "web"), appPods(ns, "native")

		By("each sibling fails single probe runs for 20 s before the hang and all along")
		stop := make(chan struct{})
		defer close(stop)
		go flap(enrolled[1], stop)
		go flap(native[1], stop)
		time.Sleep(20 * time.Second)

		limit := time.Duration(httpProbe().FailureThreshold*httpProbe().PeriodSeconds)*time.Second + 10*time.Second
		tn := timeToRestart(ns, native[0], 90*time.Second)
		te := timeToRestart(ns, enrolled[0], limit)
		expectRestartedByOperator(ns, enrolled[0])
		Expect(restartCount(ns, enrolled[1].Name)()).To(BeZero(), "the flapping sibling is not restarted")
		appendStormReport("hang beside a sibling failing single runs, 2 replicas: enrolled restarted after %s, native after %s",
			te.Round(100*time.Millisecond), tn.Round(100*time.Millisecond))
	})
})

var _ = Describe("another namespace's Deployments failing for good on a node, then a hang of ours there", Serial, func() {
	It("restarts our hang within maxHold although the node storm goes on", func() {
		// One node: the storm is the node's.
		node := realNodes()[0]
		noisy, ns := newNamespace("noisy"), newNamespace("quiet")
		for _, name := range []string{"a", "b", "c"} {
			deployApp(noisy, app{name: name, replicas: 1, probe: httpProbe(), enrolled: true, stickySickness: true, node: node})
		}
		maxHold := time.Minute
		createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{MaxHold: &metav1.Duration{Duration: maxHold}})
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true, node: node})
		deployApp(ns, app{name: "native", replicas: 1, probe: httpProbe(), node: node})
		pod, native := onlyPod(ns, "web"), onlyPod(ns, "native")

		By("the noisy namespace's three Deployments fail for good: a node storm")
		for _, name := range []string{"a", "b", "c"} {
			setSick(onlyPod(noisy, name), true)
		}
		Eventually(func() int {
			return heldPods(noisy, "a", "NodeStorm") + heldPods(noisy, "b", "NodeStorm") +
				heldPods(noisy, "c", "NodeStorm")
		}).WithTimeout(90 * time.Second).Should(BeNumerically(">", 0))

		By("our pod hangs: held for the node storm first, then restarted within maxHold")
		tn := timeToRestart(ns, native, 90*time.Second)
		before := containerStatus(&pod, appContainer).RestartCount
		start := time.Now()
		setSick(pod, true)
		Eventually(hasEvent(ns, pod.Name, "RestartHeld", "", "NodeStorm:")).WithTimeout(30 * time.Second).Should(BeTrue())
		Eventually(restartCount(ns, pod.Name)).WithPolling(250*time.Millisecond).WithTimeout(maxHold+45*time.Second).
			Should(BeNumerically(">", before), "our hang is restarted within maxHold")
		te := time.Since(start)
		expectRestartedByOperator(ns, pod)
		appendStormReport("hang during another namespace's node storm, maxHold %s: enrolled restarted after %s, native after %s",
			maxHold, te.Round(time.Second), tn.Round(100*time.Millisecond))

		// The node storm would otherwise outlive this spec (its pods fail until their namespace is
		// gone, then the storm settles for --storm-settle-period) and hold the next spec's hang.
		By("the noisy Deployments recover and the node storm settles, before the next spec")
		for _, name := range []string{"a", "b", "c"} {
			p := onlyPod(noisy, name)
			setSick(p, false)
			Eventually(probeFailed(p.Spec.NodeName, p.UID)).WithTimeout(60 * time.Second).Should(BeFalse())
		}
		time.Sleep(stormSettlePeriod + 5*time.Second)
	})
})

// stormSettlePeriod is the manager's --storm-settle-period as the e2e install leaves it (default).
const stormSettlePeriod = 30 * time.Second
