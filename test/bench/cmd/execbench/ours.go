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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/memlimit"
)

// runOurs starts the daemon's probe manager with one exec probe per container, connected to the
// runtime as the daemon connects (cri.Connect) and under the daemon's soft memory limit.
func runOurs(ctx context.Context, c config, ids []string, n *counts) error {
	memlimit.Apply(c.memoryLimit)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	rt, err := cri.Connect(cctx, c.endpoint, 10*time.Second)
	cancel()
	if err != nil {
		return err
	}
	n.fromMetrics = true
	m := prober.NewManager(timedExecer{rt: rt, n: n}, "kube-probe/1.37", nil)
	m.LagObserver = func(time.Duration) { n.probes.Add(1) }
	go func() { _ = m.Start(ctx) }()
	started := metav1.NewTime(time.Now().Add(-time.Hour))
	pods := make([]*corev1.Pod, 0, len(ids))
	targets := make([]prober.Target, 0, len(ids))
	for i, id := range ids {
		// The pod's UID as the kubelet labelled the container: the manager checks it before the
		// first exec, as the daemon does.
		st, err := rt.ContainerStatus(ctx, id, false)
		if err != nil {
			return err
		}
		labels := st.GetStatus().GetLabels()
		uid, name, cname := types.UID(labels[cri.LabelPodUID]), fmt.Sprintf("pod-%05d", i), labels[cri.LabelContainerName]
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", UID: uid},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: cname}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1", ContainerStatuses: []corev1.ContainerStatus{{
				Name: cname, ContainerID: "containerd://" + id,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			}}},
		})
		targets = append(targets, prober.Target{
			Key: results.Key{PodUID: uid, Container: cname, Probe: "liveness"}, PodName: name, Namespace: "bench",
			Probe: corev1.Probe{
				ProbeHandler:   corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: strings.Fields(c.command)}},
				TimeoutSeconds: int32(c.timeout / time.Second), PeriodSeconds: int32(c.period / time.Second),
				FailureThreshold: 3, SuccessThreshold: 1,
			},
		})
	}
	m.Sync(targets, pods) // applied when Start runs
	return nil
}

// syncFromMetrics copies our side's failed and errored runs from the daemon's probe counter.
func (n *counts) syncFromMetrics() {
	if !n.fromMetrics {
		return
	}
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		n.errors.Store(-1)
		return
	}
	var failed, unknown float64
	for _, mf := range mfs {
		if mf.GetName() != "enhanced_liveness_daemon_probe_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				switch {
				case l.GetName() != "result":
				case l.GetValue() == "failed":
					failed += m.GetCounter().GetValue()
				case l.GetValue() == "unknown":
					unknown += m.GetCounter().GetValue()
				}
			}
		}
	}
	n.failures.Store(int64(failed))
	n.errors.Store(int64(unknown))
}
