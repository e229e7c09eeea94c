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
	"math/rand/v2"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	compbasemetrics "k8s.io/component-base/metrics"
	kprober "k8s.io/kubernetes/pkg/kubelet/prober"
	khttp "k8s.io/kubernetes/pkg/probe/http"

	"github.com/enhanced-liveness/enhanced-liveness-operator/test/bench/measure"
)

// runKubelet drives the kubelet's HTTP prober the way its worker does: one goroutine and one
// ticker per probe, first run spread over a period, a new request built for every run. Unless
// kubelet-bare, each worker also holds what the kubelet's holds for its life (its pod, a copy of
// the container, five metric label sets) and each run updates the kubelet's prober_probe_total
// and duration series, as its worker does.
func runKubelet(ctx context.Context, c config, host string, port int, rec *measure.Durations, probes, errs *atomic.Int64) {
	kp := khttp.New(false)
	full := c.mode == "kubelet"
	if full {
		compbasemetrics.NewKubeRegistry().MustRegister(kprober.ProberResults, kprober.ProberDuration)
	}
	pods := benchPods(c.workers, host, port, c.period)
	for i := range c.workers {
		action := *pods[i].Spec.Containers[0].LivenessProbe.HTTPGet
		w := &kubeletWorker{container: corev1.Container{Name: "app"}}
		if full {
			w = newKubeletWorker(pods[i])
		}
		pods[i] = nil // the worker holds its pod or nothing
		go w.run(ctx, c.period, kp, action, host, rec, probes, errs)
	}
}

// kubeletWorker is the state of the kubelet's probe worker that lives as long as the probe.
type kubeletWorker struct {
	pod       *corev1.Pod
	container corev1.Container
	spec      *corev1.Probe
	// by result: successful, failed, unknown; duration: successful, unknown
	results  [3]compbasemetrics.Labels
	duration [2]compbasemetrics.Labels
}

func newKubeletWorker(pod *corev1.Pod) *kubeletWorker {
	w := &kubeletWorker{pod: pod, container: pod.Spec.Containers[0]}
	w.spec = w.container.LivenessProbe
	for i, r := range []string{"successful", "failed", "unknown"} {
		w.results[i] = compbasemetrics.Labels{"probe_type": "Liveness", "result": r, "container": w.container.Name,
			"pod": pod.Name, "namespace": pod.Namespace, "pod_uid": string(pod.UID)}
	}
	for i := range w.duration {
		w.duration[i] = compbasemetrics.Labels{"probe_type": "Liveness", "container": w.container.Name, "pod": pod.Name, "namespace": pod.Namespace}
	}
	return w
}

func (w *kubeletWorker) run(ctx context.Context, period time.Duration, kp khttp.Prober, action corev1.HTTPGetAction, host string,
	rec *measure.Durations, probes, errs *atomic.Int64) {
	next := time.Now().Add(time.Duration(rand.Float64() * float64(period)))
	time.Sleep(time.Until(next))
	t := time.NewTicker(period)
	defer t.Stop()
	// Lag is measured against the ticker's own ticks (a ticker drops ticks after an overrun and
	// delivers the buffered one late), the first run against its start.
	scheduled := next
	for {
		rec.Add(time.Since(scheduled))
		probes.Add(1)
		start := time.Now()
		req, err := khttp.NewRequestForHTTPGetAction(&action, &w.container, host, "probe")
		if err != nil {
			errs.Add(1)
		} else if res, _, err := kp.Probe(req, time.Second); err != nil || res != "success" {
			errs.Add(1)
		} else if w.pod != nil {
			kprober.ProberResults.With(w.results[0]).Inc()
			kprober.ProberDuration.With(w.duration[0]).Observe(time.Since(start).Seconds())
		}
		select {
		case <-ctx.Done():
			return
		case scheduled = <-t.C:
		}
	}
}
