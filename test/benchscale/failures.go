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
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/latency"
)

// writeStatuses plays the node daemons: one write of each node's NodePodProbeReport carrying what
// is not passing on it, Failed for the pods in failing, with the spec generation it covers (the
// others passed). Nodes write concurrently, as independent daemons do. It returns when each
// node's write was sent and when the API server acknowledged it.
func writeStatuses(ctx context.Context, cl *cluster, w *watcher, nodes []int, failing map[types.UID]bool,
	workers int) (sent, acked map[int]time.Time, err error) {
	var mu sync.Mutex
	sent, acked = make(map[int]time.Time, len(nodes)), make(map[int]time.Time, len(nodes))
	err = parallel(ctx, len(nodes), workers, func(ctx context.Context, i int) error {
		n := nodes[i]
		now := metav1.Now()
		pods := make([]*podRec, 0, len(w.expected[n]))
		for _, p := range w.expected[n] {
			pods = append(pods, p)
		}
		slices.SortFunc(pods, func(a, b *podRec) int { return cmp.Compare(a.uid, b.uid) })
		states := []appsv1alpha1.PodProbeStatus{}
		for _, p := range pods {
			if !failing[p.uid] {
				continue
			}
			states = append(states, appsv1alpha1.PodProbeStatus{Name: p.name, Namespace: p.ns,
				UID: p.uid, ProbeStates: []appsv1alpha1.ContainerProbeState{{Name: p.name + "-app",
					ContainerID: p.containerID(), State: appsv1alpha1.ProbeFailed, Message: "HTTP probe failed with statuscode: 503",
					LastProbeTime: now, LastTransitionTime: now}}})
		}
		// Written out even when empty or zero: a merge patch leaves out what it does not name.
		patch, err := json.Marshal(map[string]any{"status": map[string]any{"probedPods": len(pods),
			"podProbeStatuses": states, "failingProbes": len(states), "probedGeneration": w.generation(n)}})
		if err != nil {
			return err
		}
		obj := &appsv1alpha1.NodePodProbeReport{ObjectMeta: objectMeta("", w.l.nodeName(n))}
		at := time.Now()
		err = retry(ctx, func(int) error {
			err := cl.daemons.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
			if apierrors.IsNotFound(err) {
				// The manager creates the report right after the node's NodePodProbe: wait for it.
				return apierrors.NewServiceUnavailable("NodePodProbeReport " + obj.GetName() + " not created yet")
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("results of %s: %w", obj.GetName(), err)
		}
		done := time.Now()
		mu.Lock()
		sent[n], acked[n] = at, done
		mu.Unlock()
		return nil
	})
	return sent, acked, err
}

// roundResult is one round of simultaneous failures.
type roundResult struct {
	failures, restarts, holds int
	nodes, mostOnNode         int // nodes the failures are on, most failures on one node
	expectRestarts            int
	decisionsPerSec           float64       // every failure decided (restart or hold), first write to last decision
	restartsPerSec            float64       // requests created, first write to last request seen
	p50, p99, max             time.Duration // from the status write sent
	ackP50, ackP99            time.Duration // from the status write acknowledged
	maxActive                 int           // most unfinished requests one workload had at once
	unexpected                int           // requests for pods that did not fail
	late                      int           // requests made after the round, while the daemons cleared the failures
	wrong                     int           // of those, requests first seen after their pod's failure was cleared
	written                   time.Duration // first status write sent to the last acknowledged
	apiserverCPU, etcdCPU     time.Duration // from the first status write to the last decision
	restoreCPU                time.Duration // control plane, carrying the requests out until the manager is idle
	decideWindow              time.Duration // wall time of apiserverCPU and etcdCPU
	restoreWindow             time.Duration // wall time of restoreCPU
	reconciles                float64       // decision controller reconciles until the last decision
	notConfirmed              float64       // held restarts the API server showed recovered
	use                       usage
	requests                  string
	heldBy                    string
	decideRequests            string // kube-apiserver's requests while the failures are decided, by verb and resource
	restoreRequests           string // kube-apiserver's requests during the restore, by verb and resource
	latency                   string
	load                      string
}

// pickFailing takes failures/failingWorkloads pods of each of failingWorkloads workloads spread
// over the cluster, pods no earlier round took, each on the node with the fewest failures so far:
// failures spread over nodes, as unrelated failures do, and do not make a node storm.
func pickFailing(l layout, pods []*podRec, o options, round int) []*podRec {
	per := o.failures / o.failingWorkloads
	used := map[int]bool{} // pod numbers taken by earlier rounds
	load := make([]int, l.nodes)
	var out []*podRec
	for range round + 1 {
		clear(load)
		out = out[:0]
		for k := range o.failingWorkloads {
			w := k * l.workloads / o.failingWorkloads
			for range per {
				best := -1
				for i := range l.perWorkload {
					if !used[w*l.perWorkload+i] && (best < 0 || load[l.node(w, i)] < load[l.node(w, best)]) {
						best = i
					}
				}
				g := w*l.perWorkload + best
				used[g] = true
				load[l.node(w, best)]++
				out = append(out, pods[g])
			}
		}
	}
	return out
}

// runRound reports the failures at once and waits until the manager has decided every one of
// them: as many requests as its budget allows, a MaxUnavailable hold for the rest.
func runRound(ctx context.Context, cl *cluster, m *managerProc, w *watcher, l layout, pods []*podRec,
	o options, round int) (roundResult, error) {
	failing := pickFailing(l, pods, o, round)
	res := roundResult{failures: len(failing), load: loadAvg(),
		expectRestarts: o.failingWorkloads * min(o.failures/o.failingWorkloads, o.maxUnavailable)}
	failingUID := map[types.UID]bool{}
	nodeSet := map[int]bool{}
	perNode := map[int]int{}
	for _, p := range failing {
		failingUID[p.uid] = true
		nodeSet[p.node] = true
		perNode[p.node]++
		res.mostOnNode = max(res.mostOnNode, perNode[p.node])
	}
	res.nodes = len(nodeSet)
	nodes := slices.Sorted(func(yield func(int) bool) {
		for n := range nodeSet {
			if !yield(n) {
				return
			}
		}
	})
	w.startRound()
	before, err := scrape(ctx, m.metricsURL)
	if err != nil {
		return res, err
	}
	decide0 := cl.requestCounts(ctx)
	s0, cp0, t0 := m.now(), controlPlaneCPU(), time.Now()
	if o.profile > 0 && o.logDir != "" {
		at := time.Now().Format("150405")
		go cl.profileAPIServer(ctx, o.profile, filepath.Join(o.logDir, fmt.Sprintf("apiserver-%s-round%d.pprof", at, round)))
		go saveProfile(ctx, http.DefaultClient, m.pprofURL, o.profile,
			filepath.Join(o.logDir, fmt.Sprintf("manager-%s-round%d.pprof", at, round)))
	}
	written, acked, err := writeStatuses(ctx, cl, w, nodes, failingUID, o.daemonWriters)
	if err != nil {
		return res, err
	}
	first := time.Now()
	for _, at := range written {
		if at.Before(first) {
			first = at
		}
	}

	deadline := time.Now().Add(o.roundTimeout)
	var after metrics
	var decidedAt time.Time
	for {
		if after, err = scrape(ctx, m.metricsURL); err != nil {
			return res, err
		}
		if after.decisions()-before.decisions() >= float64(len(failing)) {
			decidedAt = time.Now()
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("round %d: %.0f of %d failures decided after %s", round,
				after.decisions()-before.decisions(), len(failing), o.roundTimeout)
		}
		if err := m.alive(); err != nil {
			return res, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	res.use = m.usage(s0, m.now())
	cp1 := controlPlaneCPU()
	res.decideRequests = diffCounts(decide0, cl.requestCounts(ctx))
	res.decideWindow = time.Since(t0)
	res.apiserverCPU, res.etcdCPU = cp1["kube-apiserver"]-cp0["kube-apiserver"], cp1["etcd"]-cp0["etcd"]
	for _, at := range acked {
		res.written = max(res.written, at.Sub(first))
	}
	requested := int(after.sum("enhanced_liveness_restarts_requested_total") - before.sum("enhanced_liveness_restarts_requested_total"))
	res.holds = int(after.sum("enhanced_liveness_restarts_held_total") - before.sum("enhanced_liveness_restarts_held_total"))
	res.requests = requestsByMethod(before, after)
	res.heldBy = heldByReason(before, after)
	const decision = `controller="policy-decision"`
	res.reconciles = after.sum("controller_runtime_reconcile_total", decision) -
		before.sum("controller_runtime_reconcile_total", decision)
	res.latency = latencyByVerb(before, after)
	// The requests are created; wait until the benchmark's watch has seen each of them.
	for w.crrCount() < requested && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}

	w.mu.Lock()
	var lat, latAck []time.Duration
	var lastSeen time.Time
	for name, seen := range w.crrSeen {
		if w.crrRound[name] != w.round {
			continue
		}
		p := w.crrPod[name]
		if p == nil || !failingUID[p.uid] {
			res.unexpected++
			continue
		}
		lat = append(lat, seen.Sub(written[p.node]))
		latAck = append(latAck, seen.Sub(acked[p.node]))
		if seen.After(lastSeen) {
			lastSeen = seen
		}
	}
	for _, n := range w.maxActive {
		res.maxActive = max(res.maxActive, n)
	}
	w.mu.Unlock()
	res.restarts = len(lat)
	if len(lat) > 0 {
		res.p50, res.p99, res.max = latency.Percentile(lat, 50), latency.Percentile(lat, 99), latency.Percentile(lat, 100)
		res.ackP50, res.ackP99 = latency.Percentile(latAck, 50), latency.Percentile(latAck, 99)
		res.restartsPerSec = float64(len(lat)) / lastSeen.Sub(first).Seconds()
	}
	res.decisionsPerSec = float64(len(failing)) / decidedAt.Sub(first).Seconds()
	// What the restarts cost the control plane while they are carried out, by request.
	req0 := cl.requestCounts(ctx)
	cp2, t2 := controlPlaneCPU(), time.Now()
	res.late, res.wrong, err = restore(ctx, cl, m, w, pods, nodes, o)
	res.restoreRequests = diffCounts(req0, cl.requestCounts(ctx))
	cp3 := controlPlaneCPU()
	res.restoreWindow = time.Since(t2)
	res.restoreCPU = cp3["kube-apiserver"] - cp2["kube-apiserver"] + cp3["etcd"] - cp2["etcd"]
	if err == nil {
		var end metrics
		if end, err = scrape(ctx, m.metricsURL); err == nil {
			res.notConfirmed = end.sum("enhanced_liveness_held_restarts_not_confirmed_total") -
				before.sum("enhanced_liveness_held_restarts_not_confirmed_total")
		}
	}
	return res, err
}

// crrCount is the number of requests first seen in this round.
func (w *watcher) crrCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.crrRound {
		if r == w.round {
			n++
		}
	}
	return n
}
