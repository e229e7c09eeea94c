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
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/report"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemonoptions"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// flakyTarget serves /flaky: 500 while failing is set, 200 otherwise. It returns the port.
func flakyTarget(failing *atomic.Bool) int {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/flaky" || failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	DeferCleanup(srv.Close)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	Expect(err).NotTo(HaveOccurred())
	n, err := strconv.Atoi(port)
	Expect(err).NotTo(HaveOccurred())
	return n
}

// statusBytes is the JSON size of a report's status as the API server returned it.
func statusBytes(rep *appsv1alpha1.NodePodProbeReport) int {
	data, err := json.Marshal(&rep.Status)
	Expect(err).NotTo(HaveOccurred())
	return len(data)
}

var _ = Describe("the report's byte budget", func() {
	It("cuts the namespace that fills the report to the failures its share holds, keeps the other's whole, and lists it whole again once it fits", func() {
		tg := startTargets()
		var failing atomic.Bool
		failing.Store(true)
		flakyPort := flakyTarget(&failing)
		node := "node-budget"
		noisy, quiet := "budget-noisy", "budget-quiet"
		for _, n := range []string{noisy, quiet} {
			Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
		}
		newPod := func(namespace, name string, handler corev1.ProbeHandler) appsv1alpha1.PodProbe {
			pod := testutil.NewPod(namespace, name).OnNode(node).Running("127.0.0.1").
				ContainerID("app", "containerd://"+name).StartedAt(time.Now().Add(-time.Minute)).Create(ctx, k8sClient)
			tg.cri.AddSandbox("sb-"+string(pod.UID), string(pod.UID), "127.0.0.1", false)
			return podProbe(pod, handler)
		}
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		// 16 failing pods take about 6 KiB, the quiet one under 0.5 KiB: in a 4 KiB budget the
		// quiet namespace keeps its results, the noisy one the failures that fit its share.
		const noisyPods, budget = 16, 4 << 10
		for i := range noisyPods {
			npp.Spec.PodProbes = append(npp.Spec.PodProbes, newPod(noisy, fmt.Sprintf("noisy-%02d", i),
				corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/flaky", Port: intstr.FromInt32(int32(flakyPort))}}))
		}
		npp.Spec.PodProbes = append(npp.Spec.PodProbes, newPod(quiet, "quiet-0",
			corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/fail", Port: intstr.FromInt32(int32(tg.httpPort))}}))
		createNPP(npp)
		eng := startDaemon(node, tg.rt, func(o *Options) { o.ReportBudget = budget })

		By("every probe fails: the noisy namespace is cut to its first failures, the quiet one's failure is written")
		Eventually(func(g Gomega) {
			failed := 0
			for _, pp := range npp.Spec.PodProbes {
				e, _ := eng.Probes.Results.Get(results.Key{PodUID: pp.UID, Container: "app", Probe: pp.Name + "-app"})
				if e.State == appsv1alpha1.ProbeFailed {
					failed++
				}
			}
			g.Expect(failed).To(Equal(noisyPods+1), "probes failed in the daemon's cache")
			rep := getReport(node)
			g.Expect(rep.Status.OmittedNamespaces).To(Equal([]string{noisy}))
			listed := rep.Status.PodProbeStatuses
			g.Expect(len(listed)).To(BeNumerically(">", 1))
			g.Expect(len(listed)).To(BeNumerically("<", noisyPods+1))
			// The NodePodProbe's order: the noisy pods first (the first ones), then the quiet one.
			for i, ps := range listed[:len(listed)-1] {
				g.Expect(ps.Namespace + "/" + ps.Name).To(Equal(fmt.Sprintf("%s/noisy-%02d", noisy, i)))
				g.Expect(ps.ProbeStates).To(HaveLen(1))
				g.Expect(ps.ProbeStates[0].State).To(Equal(appsv1alpha1.ProbeFailed))
			}
			ps := listed[len(listed)-1]
			g.Expect(ps.Namespace + "/" + ps.Name).To(Equal(quiet + "/quiet-0"))
			g.Expect(ps.ProbeStates).To(HaveLen(1))
			g.Expect(ps.ProbeStates[0].State).To(Equal(appsv1alpha1.ProbeFailed))
			g.Expect(rep.Status.FailingProbes).To(BeEquivalentTo(len(listed)))
			g.Expect(statusBytes(rep)).To(BeNumerically("<=", budget))
		}).WithTimeout(20 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

		By("ReportOverBudget Warning events name the namespace: on the report, and on the namespace's first pod, in its namespace")
		Eventually(func(g Gomega) {
			var evs eventsv1.EventList
			g.Expect(k8sClient.List(ctx, &evs)).To(Succeed())
			var onReport, onPod []string
			for _, e := range evs.Items {
				if e.Reason != report.ReasonReportOverBudget || e.Type != corev1.EventTypeWarning {
					continue
				}
				switch {
				case e.Regarding.Kind == "NodePodProbeReport" && e.Regarding.Name == node:
					// A cluster-scoped object's events go to namespace default.
					g.Expect(e.Namespace).To(Equal(metav1.NamespaceDefault))
					onReport = append(onReport, e.Note)
				case e.Regarding.Kind == "Pod" && strings.Contains(e.Note, "node "+node+" "):
					g.Expect(e.Namespace).To(Equal(noisy), "an event on another namespace's pod: %s/%s", e.Regarding.Namespace, e.Regarding.Name)
					onPod = append(onPod, e.Regarding.Namespace+"/"+e.Regarding.Name+": "+e.Note)
				}
			}
			g.Expect(onReport).To(ContainElement(ContainSubstring("namespaces " + noisy + " on this node are cut to their Failed probes")))
			g.Expect(onPod).To(ConsistOf(ContainSubstring(noisy + "/noisy-00: the NodePodProbeReport of node " + node)))
		}).WithTimeout(10 * time.Second).Should(Succeed())

		By("the noisy pods pass again: the next write leaves nothing out")
		failing.Store(false)
		Eventually(func(g Gomega) {
			rep := getReport(node)
			g.Expect(rep.Status.OmittedNamespaces).To(BeEmpty())
			g.Expect(rep.Status.PodProbeStatuses).To(HaveLen(1))
			g.Expect(rep.Status.PodProbeStatuses[0].Name).To(Equal("quiet-0"))
			g.Expect(rep.Status.FailingProbes).To(BeEquivalentTo(1))
			g.Expect(rep.Status.ProbedPods).To(BeEquivalentTo(noisyPods + 1))
		}).WithTimeout(20 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	})

	// The worst a node can report (the most pods, one namespace each, the longest names, every
	// probe failing) filled to just under the budget: the API server stores it, so no budget the
	// daemon takes makes the node lose every result.
	DescribeTable("the API server accepts the fullest report the budget allows",
		func(node string, budget int) {
			// Made as the manager makes it (an owner reference), the report carries managedFields,
			// which list every omitted namespace again: the object is larger than its status.
			createNPP(&appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}})
			cache := results.NewCache()
			plan := &report.Plan{Generation: 1 << 40}
			now := time.Now()
			for i := range appsv1alpha1.MaxPodProbesPerNode {
				name := fmt.Sprintf("%0*d", appsv1alpha1.MaxPodNameLength, i)
				pp := report.PlannedPod{Name: name, Namespace: fmt.Sprintf("%0*d", appsv1alpha1.MaxNamespaceLength, i),
					UID: types.UID(fmt.Sprintf("6f1c9a52-2b7e-4c0e-9d55-%012d", i))}
				for c := range appsv1alpha1.MaxProbesPerPod {
					k := results.Key{PodUID: pp.UID, Container: fmt.Sprintf("%0*d", appsv1alpha1.MaxContainerNameLength, c)}
					k.Probe = name + "-" + k.Container
					pp.Probes = append(pp.Probes, report.PlannedProbe{Key: k, IntervalSeconds: 10})
					cache.Set(k, appsv1alpha1.ProbeFailed, "containerd://"+strings.Repeat("f", 64), strings.Repeat("m", 1024), now, results.WriteSoon)
					cache.SetFailing(k, now, results.WriteSoon)
				}
				plan.Pods = append(plan.Pods, pp)
			}
			w := &report.Writer{Client: k8sClient, APIReader: k8sClient, NodeName: node, Results: cache, Budget: budget}
			w.SetPlan(plan)
			Expect(w.Flush(ctx)).To(Succeed())
			Expect(w.Writes()).To(BeEquivalentTo(1))

			rep := getReport(node)
			size, limit := statusBytes(rep), cmp.Or(budget, report.DefaultReportBudget)
			// Filled to within one pod's entry of the budget, and never over it.
			Expect(size).To(BeNumerically("<=", limit))
			Expect(size).To(BeNumerically(">", limit-daemonoptions.MinReportBudget))
			// Every namespace is over its share (a thousandth of the budget, about one state): each
			// is cut to the Failed states its share and what the shares leave hold.
			Expect(rep.Status.OmittedNamespaces).To(HaveLen(appsv1alpha1.MaxPodProbesPerNode))
			Expect(rep.Status.PodProbeStatuses).NotTo(BeEmpty())
			for _, ps := range rep.Status.PodProbeStatuses {
				Expect(ps.ProbeStates).NotTo(BeEmpty())
				for _, st := range ps.ProbeStates {
					Expect(st.State).To(Equal(appsv1alpha1.ProbeFailed))
				}
			}
			Expect(rep.ManagedFields).NotTo(BeEmpty())
			whole, err := json.Marshal(rep)
			Expect(err).NotTo(HaveOccurred())
			Expect(len(whole)).To(BeNumerically("<", 3<<19), "the object within the 1.5 MiB the API server stores")
			states := 0
			for _, ps := range rep.Status.PodProbeStatuses {
				states += len(ps.ProbeStates)
			}
			GinkgoWriter.Printf("budget %d: status %d bytes, object with metadata %d bytes, %d namespaces cut, %d pods listed, %d states\n",
				limit, size, len(whole), len(rep.Status.OmittedNamespaces), len(rep.Status.PodProbeStatuses), states)
		},
		Entry("the default, 1 MiB", "node-budget-default", 0),
		Entry("the most --report-budget-bytes takes, 1.25 MiB", "node-budget-max", daemonoptions.MaxReportBudget),
	)
})
