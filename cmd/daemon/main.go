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
// listed in its node's NodePodProbe, reports them in its NodePodProbeReport, executes the node's
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
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/recreate"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/wiring"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemonoptions"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/memlimit"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/version"
)

// EventRecorderName is the reporting controller of every event the daemon emits; it also names
// the daemon in its --version line and the User-Agent of its API clients.
const EventRecorderName = "enhanced-liveness-daemon"

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
	build    = version.Get()
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	ctrlmetrics.Registry.MustRegister(build.Collector())
}

// parseFlags parses the command line with the daemon's flags (internal/daemonoptions, which the
// manager also uses to check the arguments it passes through) and --version, which is not one of
// them: it is a command, which the manager never passes to a daemon.
func parseFlags() (o daemonoptions.Options, printVersion bool) {
	opts := daemonoptions.Bind(flag.CommandLine)
	flag.BoolVar(&printVersion, "version", false, "Print the daemon's version, git revision and Go version, and exit.")
	flag.Parse()
	return *opts, printVersion
}

func main() {
	o, printVersion := parseFlags()
	if printVersion {
		fmt.Println(build.String(EventRecorderName))
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.Zap)))
	if err := run(o); err != nil {
		setupLog.Error(err, "daemon failed")
		os.Exit(1)
	}
}

// run sets the daemon up in steps and runs it until it is signalled to stop.
func run(o daemonoptions.Options) error {
	if err := validate(o); err != nil {
		return err
	}
	limit, err := memlimit.Resolve(o.MemoryLimit, memlimit.ContainerLimit)
	if err != nil {
		return err
	}
	setupLog.Info("Starting", "version", build.Version, "revision", build.Revision, "goVersion", build.GoVersion)
	setupLog.Info("soft memory limit", "bytes", memlimit.Apply(limit))
	ctx := ctrl.SetupSignalHandler()
	rt, err := connectRuntime(ctx, o)
	if err != nil {
		return err
	}
	mgr, err := newManager(o)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	kubeletVersion := o.KubeletVersion
	if kubeletVersion == "" {
		kubeletVersion = nodeKubeletVersion(ctx, mgr.GetAPIReader(), o.NodeName)
	}
	if err := setupNode(mgr, o, rt, kubeletVersion); err != nil {
		return err
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

// validate checks the flags; an error names the flags and the rule.
func validate(o daemonoptions.Options) error {
	if o.NodeName == "" {
		return errors.New("--node-name (or $NODE_NAME) is required")
	}
	return o.Validate()
}

// connectRuntime connects to the CRI endpoint of --cri-endpoint, else to the one found on the node.
func connectRuntime(ctx context.Context, o daemonoptions.Options) (cri.Runtime, error) {
	endpoint := o.CRIEndpoint
	if endpoint == "" {
		var err error
		if endpoint, err = cri.DetectEndpoint(cri.DefaultEndpoints); err != nil {
			return nil, err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, o.CRITimeout)
	defer cancel()
	rt, err := cri.Connect(cctx, endpoint, o.CRITimeout)
	if err != nil {
		return nil, err
	}
	setupLog.Info("connected to the container runtime", "endpoint", endpoint)
	return rt, nil
}

// newManager builds the daemon's manager: metrics, health endpoint and its node-scoped cache; no
// leader election (one daemon per node).
func newManager(o daemonoptions.Options) (ctrl.Manager, error) {
	var tlsOpts []func(*tls.Config)
	if !o.EnableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: o.SecureMetrics, TLSOpts: tlsOpts}
	if o.SecureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return nil, err
	}
	restConfig.UserAgent = build.UserAgent(EventRecorderName)
	return ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsOpts,
		HealthProbeBindAddress: o.ProbeAddr,
		LeaderElection:         false,
		Cache:                  wiring.CacheOptions(o.NodeName, o.Namespace),
	})
}

// setupNode adds what the daemon does on its node: the probe engine (workers, result cache,
// status writer, Lease heartbeat, and the controller that keeps the workers in step with the
// NodePodProbe spec and the node's pods) and the CRR executor (preStop, CRI stop, status).
func setupNode(mgr ctrl.Manager, o daemonoptions.Options, rt cri.Runtime, kubeletVersion string) error {
	// One address cache for the probes and the preStop hooks; a host-network pod's address is
	// the node's, read when such a pod's sandbox is first seen.
	addrs := &cri.Addresses{Runtime: rt, NodeIP: func(ctx context.Context) (string, error) {
		n := &corev1.Node{}
		if err := mgr.GetAPIReader().Get(ctx, client.ObjectKey{Name: o.NodeName}, n); err != nil {
			return "", err
		}
		return cri.HostIP(n)
	}}
	if _, err := wiring.Setup(mgr, wiring.Options{
		NodeName: o.NodeName, Namespace: o.Namespace, Runtime: rt, Addresses: addrs,
		UserAgent: prober.UserAgent(kubeletVersion), Recorder: mgr.GetEventRecorder(EventRecorderName),
		WriteWindow:        o.WriteWindow,
		FailureWriteWindow: o.FailureWriteWindow,
		ReportBudget:       o.ReportBudget,
	}); err != nil {
		return fmt.Errorf("setting up the probe engine: %w", err)
	}
	if err := (&recreate.Executor{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Runtime: rt, Addresses: addrs, NodeName: o.NodeName,
		Recorder:      mgr.GetEventRecorder(EventRecorderName),
		HookUserAgent: strings.Replace(prober.UserAgent(kubeletVersion), "kube-probe/", "kube-lifecycle/", 1),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the CRR executor: %w", err)
	}
	return nil
}

// nodeKubeletVersion reads status.nodeInfo.kubeletVersion of the node; "" when it cannot
// (prober.UserAgent then falls back to the version the daemon was built for).
func nodeKubeletVersion(ctx context.Context, r client.Reader, name string) string {
	n := &corev1.Node{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		setupLog.Info("cannot read the node's kubelet version; using the built-in one", "error", err.Error())
		return ""
	}
	return n.Status.NodeInfo.KubeletVersion
}
