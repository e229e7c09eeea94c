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

// Command daemon is the enhanced-liveness node daemon: one per node, it runs the liveness probes
// listed in its node's NodePodProbe, reports them in its status, executes the node's
// ContainerRecreateRequests and holds a Lease as its heartbeat.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	_ "k8s.io/client-go/plugin/pkg/client/auth"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/memlimit"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/options"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/recreate"
)

// EventRecorderName is the reporting controller of every event the daemon emits.
const EventRecorderName = "enhanced-liveness-daemon"

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
}

// parseFlags parses the command line with the daemon's flags (internal/daemon/options, which the
// manager also uses to check the arguments it passes through).
func parseFlags() (options.Options, zap.Options) {
	o := options.Bind(flag.CommandLine)
	flag.Parse()
	return *o, o.Zap
}

func main() {
	o, zo := parseFlags()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	if err := run(o); err != nil {
		setupLog.Error(err, "daemon failed")
		os.Exit(1)
	}
}

func run(o options.Options) error {
	if o.NodeName == "" {
		return errors.New("--node-name (or $NODE_NAME) is required")
	}
	if err := o.Validate(); err != nil {
		return err
	}
	limit, err := memlimit.Resolve(o.MemoryLimit, memlimit.ContainerLimit)
	if err != nil {
		return err
	}
	setupLog.Info("soft memory limit", "bytes", memlimit.Apply(limit))
	ctx := ctrl.SetupSignalHandler()

	endpoint := o.CRIEndpoint
	if endpoint == "" {
		var err error
		if endpoint, err = cri.DetectEndpoint(cri.DefaultEndpoints); err != nil {
			return err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, o.CRITimeout)
	rt, err := cri.Connect(cctx, endpoint, o.CRITimeout)
	cancel()
	if err != nil {
		return err
	}
	setupLog.Info("connected to the container runtime", "endpoint", endpoint)

	var tlsOpts []func(*tls.Config)
	if !o.EnableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: o.SecureMetrics, TLSOpts: tlsOpts}
	if o.SecureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsOpts,
		HealthProbeBindAddress: o.ProbeAddr,
		LeaderElection:         false,
		Cache:                  daemon.CacheOptions(o.NodeName, o.Namespace),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}

	// Probe engine: workers, result cache, status writer, Lease heartbeat, and the controller
	// that keeps the workers in step with the NodePodProbe spec and the node's pods.
	kubeletVersion := o.KubeletVersion
	if kubeletVersion == "" {
		kubeletVersion = nodeKubeletVersion(ctx, mgr.GetAPIReader(), o.NodeName)
	}
	if _, err := daemon.Setup(mgr, daemon.Options{
		NodeName: o.NodeName, Namespace: o.Namespace, Runtime: rt,
		UserAgent: prober.UserAgent(kubeletVersion), Recorder: mgr.GetEventRecorder(EventRecorderName),
		WriteWindow:        o.WriteWindow,
		FailureWriteWindow: o.FailureWriteWindow,
	}); err != nil {
		return fmt.Errorf("setting up the probe engine: %w", err)
	}

	// CRR executor: runs this node's ContainerRecreateRequests (preStop, CRI stop, status).
	if err := (&recreate.Executor{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Runtime: rt, NodeName: o.NodeName,
		Recorder:      mgr.GetEventRecorder(EventRecorderName),
		HookUserAgent: strings.Replace(prober.UserAgent(kubeletVersion), "kube-probe/", "kube-lifecycle/", 1),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the CRR executor: %w", err)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	setupLog.Info("starting the daemon", "node", o.NodeName, "namespace", o.Namespace)
	return mgr.Start(ctx)
}

// nodeKubeletVersion reads status.nodeInfo.KubeletVersion of the node; "" when it cannot
// (prober.UserAgent then falls back to the version the daemon was built for).
func nodeKubeletVersion(ctx context.Context, r client.Reader, name string) string {
	n := &corev1.Node{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		setupLog.Info("cannot read the node's kubelet version; using the built-in one", "error", err.Error())
		return ""
	}
	return n.Status.NodeInfo.KubeletVersion
}
