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
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/admissionpolicy"
	appscontroller "github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/apps"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
	policycontroller "github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/policy"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/trust"
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
	return f
}

// applyTo validates the client flags and sets them on the manager's rest config. It also turns
// on the client's latency metrics: rest_client_rate_limiter_duration_seconds shows when
// --kube-api-qps is what the manager waits for, rest_client_request_duration_seconds when it is
// the API server.
func (f *scaleFlags) applyTo(cfg *rest.Config) error {
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
	cfg.QPS = float32(f.kubeAPIQPS)
	cfg.Burst = f.kubeAPIBurst
	metrics.RegisterRESTClientMetrics(metrics.MetricRequestLatency, metrics.MetricRateLimiterLatency)
	return nil
}

// cacheOptions is the manager's cache: enrolled pods only, the DaemonSet and Leases of the
// operator namespace only, and unless --strip-cached-objects=false, pods stripped to what the
// controllers read and no managedFields on any object (nothing in the manager reads them).
func (f *scaleFlags) cacheOptions(operatorNamespace string) cache.Options {
	pods := appscontroller.EnrolledPodsOnly()
	var strip toolscache.TransformFunc
	if f.stripCache {
		strip = cache.TransformStripManagedFields()
	} else {
		pods.Transform = nil
	}
	daemonSetKey, daemonSets := daemonset.CacheByObject(operatorNamespace)
	leaseKey, leases := policycontroller.LeaseCacheByObject(operatorNamespace)
	byObject := map[client.Object]cache.ByObject{
		&corev1.Pod{}: pods,
		daemonSetKey:  daemonSets,
		leaseKey:      leases,
	}
	maps.Copy(byObject, admissionpolicy.CacheByObject())
	trustKey, trustCM := trust.CacheByObject(operatorNamespace)
	byObject[trustKey] = trustCM
	return cache.Options{DefaultTransform: strip, ByObject: byObject}
}
