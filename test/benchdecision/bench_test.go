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

package benchdecision

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// BenchmarkDecisions reports, per round of 200 simultaneous failures: decisions/s (failures
// decided and requested per second of wall time, from the first status write to the last CRR
// created) and p50/p99 latency (status write of the failure's node to its CRR created).
func BenchmarkDecisions(b *testing.B) {
	ctx := context.Background()
	var all []time.Duration
	var totalWall time.Duration
	for round := range b.N {
		b.StopTimer()
		failing := pickFailing(round)
		mu.Lock()
		decisions = map[types.NamespacedName]time.Time{}
		mu.Unlock()
		b.StartTimer()

		written, start := reportFailures(ctx, b, failing)
		deadline := time.Now().Add(2 * time.Minute)
		for {
			mu.Lock()
			n := len(decisions)
			mu.Unlock()
			if n >= len(failing) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("round %d: only %d of %d failures decided for a restart", round, n, len(failing))
			}
			time.Sleep(time.Millisecond)
		}

		b.StopTimer()
		mu.Lock()
		var last time.Time
		for _, p := range failing {
			at := decisions[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]
			all = append(all, at.Sub(written[podNode[p.UID]]))
			if at.After(last) {
				last = at
			}
		}
		decisions = nil
		mu.Unlock()
		totalWall += last.Sub(start)
		restore(ctx, b, failing)
	}
	slices.Sort(all)
	q := func(f float64) time.Duration { return all[int(f*float64(len(all)-1))] }
	b.ReportMetric(float64(len(all))/totalWall.Seconds(), "decisions/s")
	b.ReportMetric(float64(q(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(q(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
}

// pickFailing picks 4 pods of every Deployment, different ones each round.
func pickFailing(round int) []*corev1.Pod {
	var out []*corev1.Pod
	for w := range workloads {
		for k := range failingPerLoad {
			out = append(out, pods[w*replicas+(round*failingPerLoad+k)%replicas])
		}
	}
	return out
}

// reportFailures plays the daemons: one report write per node, concurrently, carrying every
// failure of the node. It returns when each node's write was sent, and the round's start.
func reportFailures(ctx context.Context, b *testing.B, failing []*corev1.Pod) (map[string]time.Time, time.Time) {
	byNode := map[string][]*corev1.Pod{}
	for _, p := range failing {
		byNode[podNode[p.UID]] = append(byNode[podNode[p.UID]], p)
	}
	reps := map[string]*appsv1alpha1.NodePodProbeReport{}
	for node, ps := range byNode {
		rep := &appsv1alpha1.NodePodProbeReport{}
		if err := c.Get(ctx, client.ObjectKey{Name: node}, rep); err != nil {
			b.Fatal(err)
		}
		now := metav1.Now()
		rep.Status.PodProbeStatuses, rep.Status.FailingProbes = nil, int32(len(ps))
		for _, p := range ps {
			state := appsv1alpha1.ContainerProbeState{Name: p.Name + "-app", ContainerID: cid(p, gen[p.UID]),
				State: appsv1alpha1.ProbeFailed, Message: "HTTP probe failed with statuscode: 503",
				LastProbeTime: now, LastTransitionTime: now}
			rep.Status.PodProbeStatuses = append(rep.Status.PodProbeStatuses, appsv1alpha1.PodProbeStatus{
				Name: p.Name, Namespace: p.Namespace, UID: p.UID, ProbeStates: []appsv1alpha1.ContainerProbeState{state}})
		}
		reps[node] = rep
	}
	written := map[string]time.Time{}
	var g errgroup.Group
	type w struct {
		node string
		at   time.Time
	}
	ch := make(chan w, len(reps))
	start := time.Now()
	for node, rep := range reps {
		g.Go(func() error {
			at := time.Now()
			ch <- w{node, at}
			return c.Status().Update(ctx, rep)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	close(ch)
	for x := range ch {
		written[x.node] = x.at
	}
	return written, start
}

// restore plays the daemon and the kubelet after a round: requests finished, containers running
// under a new ID, probe states cleared.
func restore(ctx context.Context, b *testing.B, failing []*corev1.Pod) {
	var g errgroup.Group
	g.SetLimit(32)
	list := &appsv1alpha1.ContainerRecreateRequestList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		b.Fatal(err)
	}
	for i := range list.Items {
		crr := &list.Items[i]
		if crr.Status.Phase == appsv1alpha1.RecreateSucceeded {
			continue
		}
		g.Go(func() error {
			crr.Status.Phase = appsv1alpha1.RecreateSucceeded
			return c.Status().Update(ctx, crr)
		})
	}
	for _, p := range failing {
		next := gen[p.UID] + 1 // gen is only touched by this goroutine
		gen[p.UID] = next
		g.Go(func() error {
			fresh := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), fresh); err != nil {
				return err
			}
			return setRunning(ctx, fresh, next)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	for n := range nodes {
		rep := &appsv1alpha1.NodePodProbeReport{}
		if err := c.Get(ctx, client.ObjectKey{Name: fmt.Sprintf("node-%02d", n)}, rep); err != nil {
			b.Fatal(err)
		}
		rep.Status.PodProbeStatuses, rep.Status.FailingProbes = nil, 0
		if err := c.Status().Update(ctx, rep); err != nil {
			b.Fatal(err)
		}
	}
	// Let the controller see the restored state before the next round is timed.
	time.Sleep(2 * time.Second)
}
