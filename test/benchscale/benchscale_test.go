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

package main

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// The benchmark's measurements rest on these helpers; they are checked here without a cluster.

func TestLayoutSpreadsWorkloadsOverDistinctNodes(t *testing.T) {
	l, err := newLayout(10000, 50, 20, 20)
	if err != nil {
		t.Fatal(err)
	}
	if l.workloads != 200 || l.nodes != 500 {
		t.Fatalf("layout %+v", l)
	}
	perNode := make([]int, l.nodes)
	for w := range l.workloads {
		seen := map[int]bool{}
		for i := range l.perWorkload {
			n := l.node(w, i)
			if seen[n] {
				t.Fatalf("workload %d has two pods on node %d", w, n)
			}
			seen[n] = true
			perNode[n]++
		}
	}
	for n, c := range perNode {
		if c != 20 {
			t.Fatalf("node %d has %d pods", n, c)
		}
	}
	for _, bad := range [][4]int{{1001, 50, 20, 20}, {1000, 50, 25, 20}, {1000, 50, 20, 21}} {
		if _, err := newLayout(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("newLayout%v accepted", bad)
		}
	}
}

func TestPickFailingSpreadsOverWorkloadsAndRounds(t *testing.T) {
	l, _ := newLayout(100000, 50, 20, 20)
	pods := make([]*podRec, l.pods)
	for g := range pods {
		pods[g] = &podRec{uid: types.UID(fmt.Sprint(g)), w: g / l.perWorkload, node: l.node(g/l.perWorkload, g%l.perWorkload)}
	}
	o := options{failures: 1000, failingWorkloads: 200}
	seen := map[types.UID]bool{}
	for round := range 3 {
		failing := pickFailing(l, pods, o, round)
		workloads, nodes := map[int]int{}, map[int]int{}
		for _, p := range failing {
			if nodes[p.node]++; nodes[p.node] > 2 {
				t.Fatalf("round %d fails %d pods on node %d", round, nodes[p.node], p.node)
			}
			if seen[p.uid] {
				t.Fatalf("round %d fails pod %s again", round, p.uid)
			}
			seen[p.uid] = true
			workloads[p.w]++
		}
		if len(failing) != 1000 || len(workloads) != 200 {
			t.Fatalf("round %d: %d failures in %d workloads", round, len(failing), len(workloads))
		}
		for w, n := range workloads {
			if n != 5 {
				t.Fatalf("workload %d has %d failures", w, n)
			}
		}
	}
}

func TestFitLine(t *testing.T) {
	a, b := fitLine([]float64{10000, 25000, 50000}, []float64{30 + 0.002*10000, 30 + 0.002*25000, 30 + 0.002*50000})
	if math.Abs(a-30) > 1e-6 || math.Abs(b-0.002) > 1e-9 {
		t.Errorf("fitLine = %v + %v x, want 30 + 0.002 x", a, b)
	}
}

func TestScrape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprint(w, `# HELP x
enhanced_liveness_restarts_requested_total 800
enhanced_liveness_restarts_held_total{reason="MaxUnavailable"} 150
enhanced_liveness_restarts_held_total{reason="RateLimited"} 50
rest_client_requests_total{code="201",host="h",method="POST"} 1800
rest_client_requests_total{code="200",host="h",method="GET"} 7
workqueue_depth{controller="a",name="a"} 0
`)
	}))
	defer srv.Close()
	m, err := scrape(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if m.decisions() != 1000 || m.sum("enhanced_liveness_restarts_held_total", `reason="RateLimited"`) != 50 {
		t.Errorf("decisions %v, RateLimited %v", m.decisions(), m.sum("enhanced_liveness_restarts_held_total", `reason="RateLimited"`))
	}
	before := metrics{`rest_client_requests_total{code="201",host="h",method="POST"}`: 800}
	if got := requestsByMethod(before, m); got != "GET 7, POST 1000" {
		t.Errorf("requestsByMethod = %q", got)
	}
}

func TestWatcherCheck(t *testing.T) {
	l, _ := newLayout(1000, 50, 20, 1)
	var pods []*podRec
	for g := range l.pods {
		w, i := g/l.perWorkload, g%l.perWorkload
		pods = append(pods, &podRec{ns: l.namespace(w), name: l.podName(w, i), uid: types.UID(fmt.Sprint(g)), w: w,
			node: l.node(w, i), ip: podIP(g)})
	}
	wt := newWatcher(l, pods)
	good := func() *appsv1alpha1.NodePodProbe {
		npp := &appsv1alpha1.NodePodProbe{}
		npp.Name = l.nodeName(3)
		for _, p := range wt.expected[3] {
			npp.Spec.PodProbes = append(npp.Spec.PodProbes, appsv1alpha1.PodProbe{Name: p.name, Namespace: p.ns, UID: p.uid})
		}
		return npp
	}
	if ok, why := wt.check(good(), 3); !ok {
		t.Fatalf("a correct spec is rejected: %s", why)
	}
	for name, spoil := range map[string]func(*appsv1alpha1.NodePodProbe){
		"missing pod": func(n *appsv1alpha1.NodePodProbe) { n.Spec.PodProbes = n.Spec.PodProbes[1:] },
		"foreign pod": func(n *appsv1alpha1.NodePodProbe) { n.Spec.PodProbes[0].UID = "other" },
		"wrong name":  func(n *appsv1alpha1.NodePodProbe) { n.Spec.PodProbes[0].Name += "x" },
	} {
		npp := good()
		spoil(npp)
		if ok, _ := wt.check(npp, 3); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	wt.npp(good(), true, false)
	if _, _, correct, _ := wt.convergence(); correct != 1 {
		t.Errorf("%d nodes correct after one correct write", correct)
	}
	wt.npp(good(), true, true)
	if _, _, correct, _ := wt.convergence(); correct != 0 {
		t.Errorf("%d nodes correct after the delete", correct)
	}
	if all, spec, most := wt.writesPerNode(); most != 2 || all != 2/float64(l.nodes) || spec != all {
		t.Errorf("writes per node %v, spec %v, most %d", all, spec, most)
	}
}

func TestThroughputBound(t *testing.T) {
	for _, tc := range []struct {
		cores       int
		perDecision time.Duration
		bound       float64
	}{
		{2, 25 * time.Millisecond, 80},  // 18 ms control plane + 7 ms manager on 2 cores
		{8, 25 * time.Millisecond, 320}, // the same costs on more cores
		{2, 10 * time.Millisecond, 200},
		{2, 0, 0}, // nothing measured: no bound
	} {
		if got := throughputBound(tc.cores, tc.perDecision); math.Abs(got-tc.bound) > 1e-9 {
			t.Errorf("throughputBound(%d, %s) = %v, want %v", tc.cores, tc.perDecision, got, tc.bound)
		}
	}
	if got := perDecision(5*time.Second, 1000); got != 5*time.Millisecond {
		t.Errorf("perDecision = %s, want 5ms", got)
	}
	if got := perDecision(time.Second, 0); got != 0 {
		t.Errorf("perDecision without failures = %s, want 0", got)
	}
	if got := fraction(54, 80); math.Abs(got-67.5) > 1e-9 {
		t.Errorf("fraction(54, 80) = %v, want 67.5", got)
	}
}

func TestEnrolledPerRestart(t *testing.T) {
	ms := time.Millisecond
	rounds := []roundResult{
		{apiserverCPU: 600 * ms, etcdCPU: 100 * ms, restoreCPU: 300 * ms, restarts: 8, late: 2,
			decideWindow: time.Second, restoreWindow: 2 * time.Second},
		{apiserverCPU: 400 * ms, etcdCPU: 0, restoreCPU: 600 * ms, restarts: 10,
			decideWindow: time.Second, restoreWindow: time.Second},
	}
	del := cpuWindow{cpu: 200 * ms, wall: time.Second}
	// (1000 + 1000) ms over 20 restarts, plus 200 ms over 20 deletions.
	if got := enrolledPerRestart(rounds, 20, del, 0); got != 110*ms {
		t.Errorf("per restart %s, want 110ms", got)
	}
	// At an idle rate of 50 ms/s, 5 s of rounds cost 250 ms less and the deletions 50 ms less.
	if got := enrolledPerRestart(rounds, 20, del, 0.05); got != 110*ms-250*ms/20-50*ms/20 {
		t.Errorf("per restart above idle %s, want %s", got, 110*ms-250*ms/20-50*ms/20)
	}
	if got := enrolledPerRestart(rounds, 0, cpuWindow{}, 0); got != 100*ms {
		t.Errorf("without deletions %s, want 100ms", got)
	}
	if got := enrolledPerRestart([]roundResult{{apiserverCPU: ms}}, 0, cpuWindow{}, 0); got != 0 {
		t.Errorf("no restart: %s, want 0", got)
	}
	if got := (cpuWindow{cpu: 10 * ms, wall: time.Second}).net(0.5); got != 0 {
		t.Errorf("below the idle rate: %s, want 0", got)
	}
	if r := (restartCost{enrolled: 30 * ms, native: 10 * ms}).ratio(); r != 3 {
		t.Errorf("ratio %v, want 3", r)
	}
	if r := (restartCost{enrolled: 30 * ms}).ratio(); r != 0 {
		t.Errorf("ratio without a native figure %v, want 0", r)
	}
}

func TestRequestCountLabelsAndDiff(t *testing.T) {
	s := `apiserver_request_total{code="201",component="apiserver",group="",resource="events",scope="resource",subresource="",verb="POST",version="v1"}`
	if got := label(s, "verb") + " " + label(s, "resource") + "/" + label(s, "subresource"); got != "POST events/" {
		t.Errorf("labels = %q", got)
	}
	if got := label(`x{code="200"}`, "code"); got != "200" {
		t.Errorf("first label = %q", got)
	}
	if got := label(`x{code="200"}`, "verb"); got != "" {
		t.Errorf("absent label = %q", got)
	}
	a := map[string]float64{"POST events": 10, "PATCH pods/status": 5}
	b := map[string]float64{"POST events": 30, "PATCH pods/status": 5, "DELETE crrs": 7}
	if got := diffCounts(a, b); got != "POST events 20, DELETE crrs 7" {
		t.Errorf("diff = %q", got)
	}
}
