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
	"math/rand/v2"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	compbasemetrics "k8s.io/component-base/metrics"
	kprober "k8s.io/kubernetes/pkg/kubelet/prober"
	khttp "k8s.io/kubernetes/pkg/probe/http"

	"github.com/enhanced-liveness/enhanced-liveness-operator/test/bench/measure"
)

// runKubelet drives the kubelet's HTTP prober the way its worker does: one goroutine and one
// ticker per probe, first run spread over a period, a new request built for every run; unless
// kubelet-bare, each run also updates the kubelet's prober_probe_total and duration series with
// label sets built once per worker, as its worker does.
func runKubelet(ctx context.Context, c config, host string, port int, rec *measure.Durations, probes, errs *atomic.Int64) {
	kp := khttp.New(false)
	withMetrics := c.mode == "kubelet"
	if withMetrics {
		compbasemetrics.NewKubeRegistry().MustRegister(kprober.ProberResults, kprober.ProberDuration)
	}
	for i := range c.workers {
		go func() {
			container := corev1.Container{Name: "app"}
			pod := fmt.Sprintf("pod-%05d", i)
			resultLabels := compbasemetrics.Labels{"probe_type": "Liveness", "result": "successful", "container": "app",
				"pod": pod, "namespace": "bench", "pod_uid": fmt.Sprintf("uid-%05d", i)}
			durationLabels := compbasemetrics.Labels{"probe_type": "Liveness", "container": "app", "pod": pod, "namespace": "bench"}
			action := corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(port))}
			next := time.Now().Add(time.Duration(rand.Float64() * float64(c.period)))
			time.Sleep(time.Until(next))
			t := time.NewTicker(c.period)
			defer t.Stop()
			// Lag is measured against the ticker's own ticks (a ticker drops ticks after an
			// overrun and delivers the buffered one late), the first run against its start.
			scheduled := next
			for {
				rec.Add(time.Since(scheduled))
				probes.Add(1)
				start := time.Now()
				req, err := khttp.NewRequestForHTTPGetAction(&action, &container, host, "probe")
				if err != nil {
					errs.Add(1)
				} else if res, _, err := kp.Probe(req, time.Second); err != nil || res != "success" {
					errs.Add(1)
				} else if withMetrics {
					kprober.ProberResults.With(resultLabels).Inc()
					kprober.ProberDuration.With(durationLabels).Observe(time.Since(start).Seconds())
				}
				select {
				case <-ctx.Done():
					return
				case scheduled = <-t.C:
				}
			}
		}()
	}
}
