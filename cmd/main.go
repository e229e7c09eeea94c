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

// Command manager is the enhanced-liveness manager: the pod, ContainerRecreateRequest and policy
// webhooks and the controllers (probe mapping, decision, CRR lifecycle, the daemon DaemonSet,
// the admission policy). main resolves the flags once and sets the manager up in steps
// (setup.go), in this order: manager and cache, identity, checks, indexes, reconcilers,
// webhooks.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/memlimit"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/version"
	// +kubebuilder:scaffold:imports
)

// component names the manager in its --version line and the User-Agent of its API clients.
const component = "enhanced-liveness-manager"

// memoryLimit is the manager container's memory limit: the alert
// EnhancedLivenessManagerMemoryNearLimit compares the process's resident memory with it, since a
// manager killed for memory holds and restarts nothing until it is back, and its memory grows
// with the enrolled pods of the whole cluster.
var memoryLimit = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "enhanced_liveness_memory_limit_bytes",
	Help: "The memory limit of the manager's container, read from its cgroup at start (0: none).",
})

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
	build    = version.Get()
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))

	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(scheme))
	// +kubebuilder:scaffold:scheme
	metrics.Registry.MustRegister(build.Collector(), memoryLimit)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == stopCommand {
		if err := runStop(ctrl.SetupSignalHandler(), os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "manager %s: %v\n", stopCommand, err)
			os.Exit(1)
		}
		return
	}
	f := bindFlags(flag.CommandLine)
	flag.Parse()
	if f.printVersion {
		fmt.Println(build.String(component))
		return
	}
	mustFlagsFromEnv(flag.CommandLine) // ELO_<FLAG> for what the command line does not set (env_flags.go)
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
	if err := run(ctrl.SetupSignalHandler(), f); err != nil {
		setupLog.Error(err, "Manager failed")
		os.Exit(1)
	}
}

// run sets the manager up and runs it until ctx ends.
func run(ctx context.Context, f *flags) error {
	cfg, err := f.resolve()
	if err != nil {
		return fmt.Errorf("invalid flag: %w", err)
	}
	limit, err := memlimit.Resolve(f.scale.memoryLimit, memlimit.ContainerLimit)
	if err != nil {
		return fmt.Errorf("invalid flag: %w", err)
	}
	setupLog.Info("Starting", "version", build.Version, "revision", build.Revision, "goVersion", build.GoVersion)
	setupLog.Info("soft memory limit", "bytes", memlimit.Apply(limit))
	containerLimit, _ := memlimit.ContainerLimit()
	memoryLimit.Set(float64(containerLimit))
	certsReady := make(chan struct{})
	apiClock := apiclock.New(nil)
	mgr, err := newManager(f, cfg, certsReady, apiClock)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	id, err := setupIdentity(ctx, mgr, cfg)
	if err != nil {
		return err
	}
	id.apiClock = apiClock
	if err := setupChecks(mgr, id); err != nil {
		return fmt.Errorf("setting up health checks: %w", err)
	}
	// Indexes are registered once, before the controllers that query them.
	if err := managercache.AddIndexes(ctx, mgr); err != nil {
		return fmt.Errorf("registering cache indexes: %w", err)
	}
	if err := setupReconcilers(mgr, cfg, id); err != nil {
		return err
	}
	if err := setupWebhooks(mgr, cfg, id, certsReady); err != nil {
		return err
	}
	// +kubebuilder:scaffold:builder

	setupLog.Info("Starting manager", "operatorNamespace", cfg.operatorNamespace)
	return mgr.Start(ctx)
}
