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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// watcher follows, from the benchmark's side, what the manager writes: every NodePodProbe
// write (is the node's spec correct yet?) and every ContainerRecreateRequest (when was it first
// seen, which workload's budget does it use). Events arrive over a watch, as any client would
// see them.
type watcher struct {
	l        layout
	expected []map[types.UID]*podRec // by node: the pods its NodePodProbe must list
	byName   map[types.NamespacedName]*podRec

	mu        sync.Mutex
	writes    []int   // NodePodProbe writes (create, update, delete) per node
	specs     []int   // of which changed the spec (create or new generation)
	gens      []int64 // last metadata.generation seen per node
	correct   []bool  // per node
	nCorrect  int
	converged time.Time               // first moment every node's spec was correct
	wrong     []string                // first few reasons a spec is not correct, for the report
	round     int                     // current round of failures
	crrSeen   map[string]time.Time    // CRR name -> first seen
	crrRound  map[string]int          // CRR name -> round it was first seen in
	crrPod    map[string]*podRec      // CRR name -> its pod
	active    map[int]map[string]bool // workload -> its active CRRs
	maxActive map[int]int             // workload -> most active CRRs at once in this round
}

func newWatcher(l layout, pods []*podRec) *watcher {
	w := &watcher{l: l, expected: make([]map[types.UID]*podRec, l.nodes), byName: map[types.NamespacedName]*podRec{},
		writes: make([]int, l.nodes), specs: make([]int, l.nodes), gens: make([]int64, l.nodes), correct: make([]bool, l.nodes)}
	for _, p := range pods {
		if w.expected[p.node] == nil {
			w.expected[p.node] = map[types.UID]*podRec{}
		}
		w.expected[p.node][p.uid] = p
		w.byName[types.NamespacedName{Namespace: p.ns, Name: p.name}] = p
	}
	w.crrSeen, w.crrRound, w.crrPod, w.active = map[string]time.Time{}, map[string]int{}, map[string]*podRec{}, map[int]map[string]bool{}
	w.maxActive = map[int]int{}
	return w
}

// startRound starts counting the requests of a new round, and the budget they use.
func (w *watcher) startRound() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.round++
	w.maxActive = map[int]int{}
}

// start runs the benchmark's own informers for NodePodProbes and CRRs until ctx ends.
func (w *watcher) start(ctx context.Context, cl *cluster) error {
	c, err := cache.New(cl.cfg, cache.Options{Scheme: testutil.Scheme()})
	if err != nil {
		return err
	}
	npps, err := c.GetInformer(ctx, &appsv1alpha1.NodePodProbe{})
	if err != nil {
		return err
	}
	if _, err := npps.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { w.npp(o, true, false) },
		UpdateFunc: func(old, o any) {
			w.npp(o, old.(*appsv1alpha1.NodePodProbe).Generation != o.(*appsv1alpha1.NodePodProbe).Generation, false)
		},
		DeleteFunc: func(o any) { w.npp(o, true, true) },
	}); err != nil {
		return err
	}
	crrs, err := c.GetInformer(ctx, &appsv1alpha1.ContainerRecreateRequest{})
	if err != nil {
		return err
	}
	if _, err := crrs.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.crr(o, false) },
		UpdateFunc: func(_, o any) { w.crr(o, false) },
		DeleteFunc: func(o any) { w.crr(o, true) },
	}); err != nil {
		return err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the benchmark's informers did not sync")
	}
	return nil
}

func (w *watcher) npp(o any, specWrite, deleted bool) {
	if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	npp, ok := o.(*appsv1alpha1.NodePodProbe)
	if !ok {
		return
	}
	n := w.nodeIndex(npp.Name)
	if n < 0 {
		return
	}
	ok, why := false, "deleted"
	if !deleted {
		ok, why = w.check(npp, n)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes[n]++
	if !deleted {
		w.gens[n] = max(w.gens[n], npp.Generation)
	}
	if specWrite {
		w.specs[n]++
	}
	if ok != w.correct[n] {
		w.correct[n] = ok
		if ok {
			w.nCorrect++
		} else {
			w.nCorrect--
		}
	}
	if !ok && !deleted && len(w.wrong) < 5 {
		w.wrong = append(w.wrong, npp.Name+": "+why)
	}
	if w.nCorrect == w.l.nodes && w.converged.IsZero() {
		w.converged = time.Now()
	}
}

// generation is the last spec generation seen of node n's NodePodProbe: what a daemon's status
// covers once the spec is correct.
func (w *watcher) generation(n int) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gens[n]
}

func (w *watcher) nodeIndex(name string) int {
	var n int
	if _, err := fmt.Sscanf(name, "node-%05d", &n); err != nil || n >= w.l.nodes || w.l.nodeName(n) != name {
		return -1
	}
	return n
}

// check compares a NodePodProbe spec with what the benchmark knows the node runs: each of its
// pods once, with its UID.
func (w *watcher) check(npp *appsv1alpha1.NodePodProbe, n int) (bool, string) {
	want := w.expected[n]
	if npp.DeletionTimestamp != nil {
		return false, "being deleted"
	}
	if len(npp.Spec.PodProbes) != len(want) {
		return false, fmt.Sprintf("%d pods, want %d", len(npp.Spec.PodProbes), len(want))
	}
	for _, pp := range npp.Spec.PodProbes {
		p := want[pp.UID]
		switch {
		case p == nil || pp.Name != p.name || pp.Namespace != p.ns:
			return false, "unexpected pod " + pp.Namespace + "/" + pp.Name
		}
	}
	return true, ""
}

func (w *watcher) crr(o any, deleted bool) {
	if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	crr, ok := o.(*appsv1alpha1.ContainerRecreateRequest)
	if !ok {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := w.crrSeen[crr.Name]; !seen && !deleted {
		w.crrSeen[crr.Name], w.crrRound[crr.Name] = now, w.round
		p := w.byName[types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}]
		if p == nil {
			return // not a pod of the benchmark: the round counts it as unexpected
		}
		w.crrPod[crr.Name] = p
	}
	p := w.crrPod[crr.Name]
	if p == nil {
		return
	}
	// Active as the decision controller counts it (docs/policy.md, rule 4).
	finished := crr.Status.Phase == appsv1alpha1.RecreateSucceeded || crr.Status.Phase == appsv1alpha1.RecreateFailed
	set := w.active[p.w]
	if set == nil {
		set = map[string]bool{}
		w.active[p.w] = set
	}
	if deleted || finished {
		delete(set, crr.Name)
	} else {
		set[crr.Name] = true
	}
	w.maxActive[p.w] = max(w.maxActive[p.w], len(set))
}

// convergence reports whether every spec is correct, since when, and the writes per node.
func (w *watcher) convergence() (done bool, at time.Time, correct int, wrong []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.converged.IsZero(), w.converged, w.nCorrect, append([]string(nil), w.wrong...)
}

// writesPerNode returns the NodePodProbe writes (all, and spec writes) per node, and the largest
// number on one node.
func (w *watcher) writesPerNode() (all, spec float64, most int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var a, s int
	for n := range w.writes {
		a += w.writes[n]
		s += w.specs[n]
		most = max(most, w.writes[n])
	}
	return float64(a) / float64(w.l.nodes), float64(s) / float64(w.l.nodes), most
}

// resetWrites starts counting NodePodProbe writes afresh; with the convergence too, for a new
// cold start once every NodePodProbe was deleted.
func (w *watcher) resetWrites(convergence bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.writes)
	clear(w.specs)
	if convergence {
		w.converged, w.wrong = time.Time{}, nil
	}
}
