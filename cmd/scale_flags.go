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
	"flag"
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/memlimit"
)

// Defaults of the client rate limit, sized by test/benchscale (docs/development.md, "Manager at
// scale"): high enough that neither the cold start's NodePodProbe writes nor a round of 1,000
// simultaneous liveness failures wait on the client, low enough that a manager gone wrong cannot
// take more than a bounded share of the API server.
const (
	defaultKubeAPIQPS   = 200
	defaultKubeAPIBurst = 400
	// defaultDecisionWorkers: see "Manager at scale" for the rounds that sized it.
	defaultDecisionWorkers = 8
)

// scaleFlags are the manager flags about its load on the API server and its memory
// (docs/development.md lists them).
type scaleFlags struct {
	kubeAPIQPS      float64
	kubeAPIBurst    int
	stripCache      bool
	decisionWorkers int
	memoryLimit     string
}

func bindScaleFlags(fs *flag.FlagSet) *scaleFlags {
	f := &scaleFlags{}
	fs.Float64Var(&f.kubeAPIQPS, "kube-api-qps", defaultKubeAPIQPS,
		"Client-side limit of requests per second to the API server, per API resource (controller-runtime keeps "+
			"one client per resource type: pods, NodePodProbes, ContainerRecreateRequests, events, ...); "+
			"-1 turns the client-side limit off and leaves it to the API server's priority and fairness.")
	fs.IntVar(&f.kubeAPIBurst, "kube-api-burst", defaultKubeAPIBurst,
		"Requests allowed at once above --kube-api-qps, per API resource.")
	fs.BoolVar(&f.stripCache, "strip-cached-objects", true,
		"Drop from cached objects what the manager never reads: managedFields of every object, and of enrolled pods "+
			"all but the fields its controllers read (much less memory per pod); false caches objects whole, as the "+
			"API server returns them, for diagnosis or to measure the difference.")
	fs.IntVar(&f.decisionWorkers, "decision-workers", defaultDecisionWorkers,
		"Liveness failures the decision controller handles at once. Deciding is serialised; the workers overlap "+
			"the API requests that carry decisions out (ContainerRecreateRequest creation), so this bounds "+
			"decisions per second at about workers / request latency.")
	fs.StringVar(&f.memoryLimit, "memory-limit", "auto",
		"Soft memory limit of the Go runtime: auto (3/4 of the container's memory limit, none without one), a "+
			"quantity such as 768Mi, or 0 (none). GOMEMLIMIT in the environment wins. The manager caches every "+
			"enrolled pod: near the limit it collects more often instead of growing into the container's limit.")
	return f
}

// validate checks the flags; an error names the flag and the rule.
func (f *scaleFlags) validate() error {
	switch {
	case f.kubeAPIQPS < 0 && f.kubeAPIQPS != -1:
		return fmt.Errorf("--kube-api-qps: must be greater than 0, or -1 for no client-side limit, got %v", f.kubeAPIQPS)
	case f.kubeAPIQPS == 0:
		return fmt.Errorf("--kube-api-qps: must be greater than 0, or -1 for no client-side limit, got 0")
	case f.kubeAPIQPS > 0 && f.kubeAPIBurst < 1:
		return fmt.Errorf("--kube-api-burst: must be at least 1, got %d", f.kubeAPIBurst)
	case f.decisionWorkers < 1:
		return fmt.Errorf("--decision-workers: must be at least 1, got %d", f.decisionWorkers)
	}
	_, err := memlimit.Resolve(f.memoryLimit, func() (int64, bool) { return 0, false })
	return err
}

// applyTo validates the client flags and sets them on the manager's rest config. It also turns
// on the client's latency metrics: rest_client_rate_limiter_duration_seconds shows when
// --kube-api-qps is what the manager waits for, rest_client_request_duration_seconds when it is
// the API server.
func (f *scaleFlags) applyTo(cfg *rest.Config) error {
	if err := f.validate(); err != nil {
		return err
	}
	cfg.QPS = float32(f.kubeAPIQPS)
	cfg.Burst = f.kubeAPIBurst
	metrics.RegisterRESTClientMetrics(metrics.MetricRequestLatency, metrics.MetricRateLimiterLatency)
	return nil
}
