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
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// restore plays the daemons and the kubelets after a round, in the order a recovery happens:
// each restarted container runs again as a new instance and is Ready, every probe succeeds
// (so the held failures are gone before the budget frees up), and then every request succeeds.
// A request made after the round (a held failure
// decided again as the budget came back) is carried out the same way and counted in late.
// It returns once no request is active and the manager is idle. Of the late requests, wrong counts those first seen
// after the write that cleared their pod's failure was acknowledged: restarts of a pod that had
// recovered. The others came while the pod was still failing as far as the API server knew.
func restore(ctx context.Context, cl *cluster, m *managerProc, w *watcher, pods []*podRec, nodes []int,
	o options) (late, wrong int, err error) {
	byUID := map[types.UID]*podRec{}
	for _, p := range pods {
		byUID[p.uid] = p
	}
	deadline := time.Now().Add(o.restoreTimeout)
	clearedAt := map[int]time.Time{} // node -> its first Succeeded write acknowledged
	for first := true; ; first = false {
		// Only the unfinished requests (status.phase is a selectable field): listing every request
		// of the run each half second would charge the benchmark's own reads (hundreds of objects
		// encoded per list) to the restarts it measures.
		list := &appsv1alpha1.ContainerRecreateRequestList{}
		if err := cl.c.List(ctx, list, client.MatchingFieldsSelector{Selector: fields.AndSelectors(
			fields.OneTermNotEqualSelector("status.phase", string(appsv1alpha1.RecreateSucceeded)),
			fields.OneTermNotEqualSelector("status.phase", string(appsv1alpha1.RecreateFailed)))}); err != nil {
			return late, wrong, err
		}
		var open []*appsv1alpha1.ContainerRecreateRequest
		var again []*podRec
		for i := range list.Items {
			crr := &list.Items[i]
			if crr.Status.Phase == appsv1alpha1.RecreateSucceeded || crr.Status.Phase == appsv1alpha1.RecreateFailed {
				continue
			}
			open = append(open, crr)
			if p := byUID[types.UID(crr.Labels[appsv1alpha1.LabelCRRPodUID])]; p != nil {
				p.gen++
				again = append(again, p)
			}
		}
		if !first {
			late += len(open)
			w.mu.Lock()
			for _, crr := range open {
				p := byUID[types.UID(crr.Labels[appsv1alpha1.LabelCRRPodUID])]
				if p == nil {
					continue
				}
				if at, ok := clearedAt[p.node]; ok && w.crrSeen[crr.Name].After(at) {
					wrong++
				}
			}
			w.mu.Unlock()
		}
		if len(open) > 0 || first {
			acked, err := carryOut(ctx, cl, w, open, again, nodes, o)
			if err != nil {
				return late, wrong, err
			}
			for n, at := range acked {
				if _, ok := clearedAt[n]; !ok {
					clearedAt[n] = at
				}
			}
		}
		w.mu.Lock()
		active := 0
		for _, set := range w.active {
			active += len(set)
		}
		w.mu.Unlock()
		if len(open) == 0 && active == 0 {
			break
		}
		if time.Now().After(deadline) {
			return late, wrong, fmt.Errorf("%d requests still active %s after the round", active, o.restoreTimeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
	ictx, cancel := context.WithTimeout(ctx, o.restoreTimeout)
	defer cancel()
	return late, wrong, idle(ictx, m.metricsURL, 3*time.Second)
}

// carryOut carries the requests out as the daemons and kubelets would: each request Recreating,
// the daemon's events up to the stop and the kubelet's writes once the container runs again as a
// new instance (daemonKillWrites, restartedWrites), the probes of nodes (and of those pods' nodes)
// reported Succeeded, then each request Succeeded (the daemon emits no event for a success). It
// returns when each node's Succeeded write was acknowledged.
func carryOut(ctx context.Context, cl *cluster, w *watcher, open []*appsv1alpha1.ContainerRecreateRequest,
	again []*podRec, nodes []int, o options) (map[int]time.Time, error) {
	finish := func(phase appsv1alpha1.ContainerRecreateRequestPhase) error {
		return parallel(ctx, len(open), o.daemonWriters, func(ctx context.Context, i int) error {
			crr := open[i]
			patch := client.MergeFrom(crr.DeepCopy())
			crr.Status.Phase = phase
			if phase == appsv1alpha1.RecreateSucceeded {
				crr.Status.CompletionTime = &metav1.Time{Time: time.Now()}
			}
			return retry(ctx, func(int) error { return cl.daemons.Status().Patch(ctx, crr, patch) })
		})
	}
	if err := finish(appsv1alpha1.RecreateRecreating); err != nil {
		return nil, fmt.Errorf("starting requests: %w", err)
	}
	err := parallel(ctx, len(again), o.daemonWriters, func(ctx context.Context, i int) error {
		p := again[i]
		node := w.l.nodeName(p.node)
		if err := daemonKillWrites(ctx, cl.core, p, node); err != nil {
			return err
		}
		return restartedWrites(ctx, cl.core, p, node)
	})
	if err != nil {
		return nil, fmt.Errorf("restarting containers: %w", err)
	}
	report := slices.Clone(nodes)
	for _, p := range again {
		if !slices.Contains(report, p.node) {
			report = append(report, p.node)
		}
	}
	_, acked, err := writeStatuses(ctx, cl, w, report, nil, o.daemonWriters)
	if err != nil {
		return nil, err
	}
	if err := finish(appsv1alpha1.RecreateSucceeded); err != nil {
		return nil, fmt.Errorf("finishing requests: %w", err)
	}
	return acked, nil
}
