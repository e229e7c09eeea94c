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
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// result is one manager run on one cluster size.
type result struct {
	l          layout
	strip      bool
	populate   time.Duration
	podWrites  float64
	startLoad  string
	synced     time.Duration // manager start to the mapping controller's workers starting
	converge   time.Duration // manager start to every NodePodProbe spec correct
	cold       usage         // manager start to convergence
	writes     float64       // NodePodProbe writes per node, until the settle period ended
	specWrites float64
	mostWrites int
	coldAPI    string // the manager's API latency and rate-limit waits until convergence
	steadyRSS  uint64
	steadyLive uint64
	budget     int // the policies' maxUnavailable
	rounds     []roundResult
	cost       restartCost
	apiserver  uint64 // RSS at the end
	etcd       uint64
}

// runManager starts a manager on a cluster that has no NodePodProbe yet (cold start), follows
// it to convergence, lets the daemons report every probe Succeeded, measures its steady memory,
// runs the rounds of failures and stops it.
func runManager(ctx context.Context, cl *cluster, bin string, w *watcher, l layout, pop *populated,
	o options, strip bool) (result, error) {
	r := result{l: l, strip: strip, populate: pop.took, podWrites: pop.podWritesPer, startLoad: loadAvg(),
		budget: o.maxUnavailable}
	w.resetWrites(true)
	args := append([]string{"--strip-cached-objects=" + strconv.FormatBool(strip)}, o.managerArgs...)
	logf("starting the manager %v (load %s)", args, r.startLoad)
	m, err := startManager(cl, bin, o.logDir, o.profile > 0 && o.logDir != "", args)
	if err != nil {
		return r, err
	}
	defer m.stop()
	s0 := sample{at: m.started}

	deadline := m.started.Add(o.convergeTimeout)
	last := time.Now()
	for {
		done, at, correct, wrong := w.convergence()
		if done {
			r.converge = at.Sub(m.started)
			r.cold = m.usage(s0, m.now())
			break
		}
		if err := m.alive(); err != nil {
			return r, err
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("%d of %d NodePodProbes correct after %s, e.g. %v", correct, l.nodes, o.convergeTimeout, wrong)
		}
		if time.Since(last) > 15*time.Second {
			logf("  %d/%d NodePodProbes correct (load %s)", correct, l.nodes, loadAvg())
			last = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	if mx, err := scrape(ctx, m.metricsURL); err == nil {
		r.coldAPI = latencyByVerb(metrics{}, mx)
	}
	if at, ok := m.workersStarted("apps-nodepodprobe"); ok {
		r.synced = at.Sub(m.started)
	}
	logf("converged in %s (load %s)", r.converge.Round(time.Millisecond), loadAvg())
	time.Sleep(o.settle)
	r.writes, r.specWrites, r.mostWrites = w.writesPerNode()

	// Steady state: every probe reported Succeeded, the manager caught up, after a GC.
	all := make([]int, l.nodes)
	for n := range all {
		all[n] = n
	}
	if _, _, err := writeStatuses(ctx, cl, w, all, nil, o.daemonWriters); err != nil {
		return r, err
	}
	ictx, cancel := context.WithTimeout(ctx, o.roundTimeout)
	err = idle(ictx, m.metricsURL, 3*time.Second)
	cancel()
	if err != nil {
		return r, fmt.Errorf("waiting for the manager to catch up with the daemons' first reports: %w", err)
	}
	if r.steadyLive, err = m.nextGC(ctx); err != nil {
		return r, err
	}
	r.steadyRSS = m.now().rss
	logf("steady: RSS %.0f MiB, live heap %.0f MiB (load %s)", mib(r.steadyRSS), mib(r.steadyLive), loadAvg())
	if m.pprofURL != "" {
		saveHeapProfile(ctx, http.DefaultClient, m.pprofURL,
			filepath.Join(o.logDir, fmt.Sprintf("manager-heap-%d-strip-%t.pprof", len(pop.pods), strip)))
	}

	for round := range o.rounds {
		rr, err := runRound(ctx, cl, m, w, l, pop.pods, o, round)
		if err != nil {
			return r, err
		}
		logf("round %d: %d decisions at %.0f/s, p99 %s (load %s)", round, rr.failures, rr.decisionsPerSec,
			rr.p99.Round(time.Millisecond), rr.load)
		r.rounds = append(r.rounds, rr)
	}
	if len(r.rounds) > 0 {
		if r.cost, err = measureRestartCost(ctx, cl, l, pop.pods, r.rounds, o.daemonWriters); err != nil {
			return r, err
		}
		logf("control plane CPU per restart: enrolled %s, native %s (load %s)", ms(r.cost.enrolled), ms(r.cost.native), loadAvg())
	}
	cp := controlPlaneRSS()
	r.apiserver, r.etcd = cp["kube-apiserver"], cp["etcd"]
	return r, nil
}

// resetCluster takes the cluster back to before the manager's first start: no NodePodProbe, report
// or request left, so that the next manager starts cold.
func resetCluster(ctx context.Context, cl *cluster, w *watcher, l layout) error {
	logf("deleting every NodePodProbe, report and request for the next cold start")
	if err := cl.c.DeleteAllOf(ctx, &appsv1alpha1.NodePodProbe{}); err != nil {
		return err
	}
	// No garbage collector runs here to delete the reports with their NodePodProbes.
	if err := cl.c.DeleteAllOf(ctx, &appsv1alpha1.NodePodProbeReport{}); err != nil {
		return err
	}
	for n := range l.namespaces {
		if err := cl.c.DeleteAllOf(ctx, &appsv1alpha1.ContainerRecreateRequest{}, client.InNamespace(l.namespace(n))); err != nil {
			return err
		}
	}
	for deadline := time.Now().Add(5 * time.Minute); ; {
		list := &appsv1alpha1.NodePodProbeList{}
		if err := cl.c.List(ctx, list, client.Limit(1)); err != nil {
			return err
		}
		_, _, correct, _ := w.convergence()
		if len(list.Items) == 0 && correct == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("NodePodProbes still there after 5 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}
