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
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// The control plane's CPU per restart, enrolled against native. A native restart is the kubelet's
// writes: its Unhealthy event (created, then updated twice as the failures repeat up to
// failureThreshold 3), Killing, and, once the container runs again, the pod status and Pulled,
// Created and Started. An enrolled restart has the same writes from the kubelet once the container
// runs again, the daemon's Unhealthy (once, when the failures reach the threshold) and Killing
// events, and adds the daemons' result writes, the request (created, Recreating and Succeeded
// from the daemon, the manager's events, deleted after its TTL) and the policy status. The
// benchmark runs the manager without its webhooks: in a cluster the request's create also goes
// through the mutating webhook.

// eventSeq makes event names unique within the run, as the recorders' random suffixes do.
var eventSeq atomic.Int64

// podEvent creates one core/v1 event on the pod's app container.
func podEvent(ctx context.Context, c client.Client, p *podRec, node, typ, reason, msg string) (*corev1.Event, error) {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: fmt.Sprintf("%s.%x", p.name, eventSeq.Add(1))},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: p.ns, Name: p.name, UID: p.uid,
			FieldPath: "spec.containers{app}"},
		Reason: reason, Message: msg, Type: typ, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: node},
	}
	return ev, retry(ctx, func(int) error { return client.IgnoreAlreadyExists(c.Create(ctx, ev)) })
}

// killWrites are the node's writes up to the kill: the Unhealthy event, its two updates, Killing.
func killWrites(ctx context.Context, c client.Client, p *podRec, node string) error {
	ev, err := podEvent(ctx, c, p, node, corev1.EventTypeWarning, "Unhealthy",
		"Liveness probe failed: HTTP probe failed with statuscode: 503")
	if err != nil {
		return err
	}
	for count := 2; count <= 3; count++ {
		body, err := json.Marshal(map[string]any{"count": count, "lastTimestamp": metav1.Now()})
		if err != nil {
			return err
		}
		if err := retry(ctx, func(int) error { return c.Patch(ctx, ev, client.RawPatch(types.MergePatchType, body)) }); err != nil {
			return err
		}
	}
	_, err = podEvent(ctx, c, p, node, corev1.EventTypeNormal, "Killing",
		"Container app failed liveness probe, will be restarted")
	return err
}

// daemonKillWrites are the node daemon's events of an enrolled restart up to the stop: its prober
// records Unhealthy once, when the failures reach the threshold (the kubelet records every failed
// run), and its executor Killing.
func daemonKillWrites(ctx context.Context, c client.Client, p *podRec, node string) error {
	if _, err := podEvent(ctx, c, p, node, corev1.EventTypeWarning, "Unhealthy",
		"Liveness probe failed: HTTP probe failed with statuscode: 503"); err != nil {
		return err
	}
	_, err := podEvent(ctx, c, p, node, corev1.EventTypeNormal, "Killing",
		"Stopping container app by ContainerRecreateRequest restart-app")
	return err
}

// restartedWrites are the kubelet's writes once the container runs again: the new instance in
// the pod status, then Pulled, Created and Started.
func restartedWrites(ctx context.Context, c client.Client, p *podRec, node string) error {
	status := runningStatus(p, nodeIP(p.node))
	err := retry(ctx, func(int) error {
		pod := &corev1.Pod{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: p.ns, Name: p.name}, pod); err != nil {
			return err
		}
		pod.Status = status
		return c.Status().Update(ctx, pod)
	})
	if err != nil {
		return err
	}
	for _, e := range [][2]string{{"Pulled", "Container image \"registry.example/shop/app:1.42.0\" already present on machine"},
		{"Created", "Created container: app"}, {"Started", "Started container app"}} {
		if _, err := podEvent(ctx, c, p, node, corev1.EventTypeNormal, e[0], e[1]); err != nil {
			return err
		}
	}
	return nil
}

// nativeRestarts plays n native liveness restarts, each pod's writes in order and the pods
// concurrently, and returns the control plane's CPU (kube-apiserver + etcd) over them.
func nativeRestarts(ctx context.Context, cl *cluster, l layout, pods []*podRec, n, workers int) (cpuWindow, error) {
	picked := pods[max(0, len(pods)-n):] // the last pods: the rounds take theirs from the front of each workload
	cp0, t0 := controlPlaneCPU(), time.Now()
	err := parallel(ctx, len(picked), workers, func(ctx context.Context, i int) error {
		p := picked[i]
		node := l.nodeName(p.node)
		if err := killWrites(ctx, cl.core, p, node); err != nil {
			return err
		}
		p.gen++
		return restartedWrites(ctx, cl.core, p, node)
	})
	cp1 := controlPlaneCPU()
	return cpuWindow{cp1["kube-apiserver"] - cp0["kube-apiserver"] + cp1["etcd"] - cp0["etcd"], time.Since(t0)}, err
}

// cpuWindow is the control plane's CPU over a stretch of wall time.
type cpuWindow struct{ cpu, wall time.Duration }

// idleCPU measures the control plane's CPU per second of wall time while nothing happens (its
// own housekeeping, the manager's Lease and watches): subtracted from every measured stretch, so
// that a slow stretch is not charged for the time it took.
func idleCPU(ctx context.Context, d time.Duration) (float64, error) {
	cp0, t0 := controlPlaneCPU(), time.Now()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	cp1 := controlPlaneCPU()
	used := cp1["kube-apiserver"] - cp0["kube-apiserver"] + cp1["etcd"] - cp0["etcd"]
	return used.Seconds() / time.Since(t0).Seconds(), nil
}

// net is what w cost above the idle rate (never below 0).
func (w cpuWindow) net(idle float64) time.Duration {
	return max(0, w.cpu-time.Duration(idle*float64(w.wall)))
}

// deleteRequests deletes the finished requests of the runs' namespaces one by one, as the
// manager does when their TTL has passed, and returns how many and the control plane's CPU.
func deleteRequests(ctx context.Context, cl *cluster, l layout, workers int) (int, cpuWindow, error) {
	var all []*appsv1alpha1.ContainerRecreateRequest
	for ns := range l.namespaces {
		list := &appsv1alpha1.ContainerRecreateRequestList{}
		if err := cl.c.List(ctx, list, client.InNamespace(l.namespace(ns))); err != nil {
			return 0, cpuWindow{}, err
		}
		for i := range list.Items {
			if list.Items[i].Finished() {
				all = append(all, &list.Items[i])
			}
		}
	}
	cp0, t0 := controlPlaneCPU(), time.Now()
	err := parallel(ctx, len(all), workers, func(ctx context.Context, i int) error {
		return retry(ctx, func(int) error { return client.IgnoreNotFound(cl.c.Delete(ctx, all[i])) })
	})
	cp1 := controlPlaneCPU()
	return len(all), cpuWindow{cp1["kube-apiserver"] - cp0["kube-apiserver"] + cp1["etcd"] - cp0["etcd"], time.Since(t0)}, err
}

// restartCost is the control plane's CPU per restart on each path, above its idle rate.
type restartCost struct {
	enrolled, native  time.Duration
	restarts, natives int
	idle              float64 // CPU seconds per second, subtracted
}

// ratio is enrolled / native (0 without a native figure).
func (c restartCost) ratio() float64 {
	if c.native <= 0 {
		return 0
	}
	return float64(c.enrolled) / float64(c.native)
}

// enrolledPerRestart spreads the control plane's CPU of the rounds (deciding and carrying out,
// the held failures included) above the idle rate over the restarts made, and adds one request's
// deletion.
func enrolledPerRestart(rounds []roundResult, deleted int, del cpuWindow, idle float64) time.Duration {
	var cpu time.Duration
	restarts := 0
	for _, rr := range rounds {
		cpu += cpuWindow{rr.apiserverCPU + rr.etcdCPU, rr.decideWindow}.net(idle) + cpuWindow{rr.restoreCPU, rr.restoreWindow}.net(idle)
		restarts += rr.restarts + rr.late
	}
	if restarts == 0 {
		return 0
	}
	per := cpu / time.Duration(restarts)
	if deleted > 0 {
		per += del.net(idle) / time.Duration(deleted)
	}
	return per
}

// measureRestartCost measures the control plane's idle rate, deletes the rounds' finished
// requests (their TTL, brought forward) and plays as many native restarts as the rounds made
// enrolled ones.
func measureRestartCost(ctx context.Context, cl *cluster, l layout, pods []*podRec, rounds []roundResult,
	workers int) (restartCost, error) {
	var c restartCost
	var err error
	if c.idle, err = idleCPU(ctx, 10*time.Second); err != nil {
		return c, err
	}
	deleted, del, err := deleteRequests(ctx, cl, l, workers)
	if err != nil {
		return c, fmt.Errorf("deleting the finished requests: %w", err)
	}
	c.enrolled = enrolledPerRestart(rounds, deleted, del, c.idle)
	for _, rr := range rounds {
		c.restarts += rr.restarts + rr.late
	}
	c.natives = c.restarts
	native, err := nativeRestarts(ctx, cl, l, pods, c.natives, workers)
	if err != nil {
		return c, fmt.Errorf("native restarts: %w", err)
	}
	if c.natives > 0 {
		c.native = native.net(c.idle) / time.Duration(c.natives)
	}
	return c, nil
}
