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
	"time"

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
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/memlimit"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/recreate"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/wiring"
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

type options struct {
	nodeName, namespace, criEndpoint string
	criTimeout, writeWindow          time.Duration
	failureWriteWindow               time.Duration
	kubeletVersion                   string
	metricsAddr, probeAddr           string
	secureMetrics, enableHTTP2       bool
	memoryLimit                      string
}

func parseFlags() (options, zap.Options) {
	var o options
	flag.StringVar(&o.nodeName, "node-name", os.Getenv("NODE_NAME"),
		"Name of the node this daemon runs on (default: $NODE_NAME, set from the downward API).")
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = appsv1alpha1.DefaultOperatorNamespace
	}
	flag.StringVar(&o.namespace, "namespace", ns, "Operator namespace that holds the daemon's Lease (default: $POD_NAMESPACE).")
	flag.StringVar(&o.criEndpoint, "cri-endpoint", "",
		"CRI runtime endpoint, e.g. unix:///run/containerd/containerd.sock; auto-detected (containerd, CRI-O) when empty.")
	flag.DurationVar(&o.criTimeout, "cri-timeout", 10*time.Second, "Connection timeout and per-call timeout of CRI calls.")
	flag.DurationVar(&o.writeWindow, "status-write-window", prober.DefaultWriteWindow,
		"How long probe transitions are gathered into one NodePodProbe status patch.")
	flag.DurationVar(&o.failureWriteWindow, "failure-write-window", prober.DefaultFailureWindow,
		"How long after the previous status patch a new liveness failure waits to be written (at most --status-write-window).")
	flag.StringVar(&o.kubeletVersion, "kubelet-version", "",
		"Kubelet version for the probes' User-Agent (kube-probe/<major>.<minor>); read from the Node object when empty.")
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":10290",
		"Address of the metrics endpoint (the daemon runs with hostNetwork); 0 disables it.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":10291", "Address of the /healthz and /readyz endpoints.")
	flag.BoolVar(&o.secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS with authentication and authorization.")
	flag.BoolVar(&o.enableHTTP2, "enable-http2", false, "Enable HTTP/2 for the metrics server.")
	flag.StringVar(&o.memoryLimit, "memory-limit", "auto",
		"Soft memory limit of the Go runtime: auto (3/4 of the container's memory limit, none without one), a quantity such as 192Mi, or 0 (none). GOMEMLIMIT in the environment wins.")
	zo := zap.Options{}
	zo.BindFlags(flag.CommandLine)
	flag.Parse()
	return o, zo
}

func main() {
	o, zo := parseFlags()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	if err := run(o); err != nil {
		setupLog.Error(err, "daemon failed")
		os.Exit(1)
	}
}

// run sets the daemon up in steps and runs it until it is signalled to stop.
func run(o options) error {
	if err := o.validate(); err != nil {
		return err
	}
	limit, err := memlimit.Resolve(o.memoryLimit, memlimit.ContainerLimit)
	if err != nil {
		return err
	}
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
	kubeletVersion := o.kubeletVersion
	if kubeletVersion == "" {
		kubeletVersion = nodeKubeletVersion(ctx, mgr.GetAPIReader(), o.nodeName)
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
	setupLog.Info("starting the daemon", "node", o.nodeName, "namespace", o.namespace)
	return mgr.Start(ctx)
}

// validate checks the flags; an error names the flags and the rule.
func (o options) validate() error {
	if o.nodeName == "" {
		return errors.New("--node-name (or $NODE_NAME) is required")
	}
	if o.writeWindow <= 0 || o.failureWriteWindow <= 0 || o.failureWriteWindow > o.writeWindow {
		return fmt.Errorf("--status-write-window (%s) and --failure-write-window (%s) must be positive, "+
			"and --failure-write-window not longer than --status-write-window", o.writeWindow, o.failureWriteWindow)
	}
	return nil
}

// connectRuntime connects to the CRI endpoint of --cri-endpoint, else to the one found on the node.
func connectRuntime(ctx context.Context, o options) (cri.Runtime, error) {
	endpoint := o.criEndpoint
	if endpoint == "" {
		var err error
		if endpoint, err = cri.DetectEndpoint(cri.DefaultEndpoints); err != nil {
			return nil, err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, o.criTimeout)
	defer cancel()
	rt, err := cri.Connect(cctx, endpoint, o.criTimeout)
	if err != nil {
		return nil, err
	}
	setupLog.Info("connected to the container runtime", "endpoint", endpoint)
	return rt, nil
}

// newManager builds the daemon's manager: metrics, health endpoint and its node-scoped cache; no
// leader election (one daemon per node).
func newManager(o options) (ctrl.Manager, error) {
	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{BindAddress: o.metricsAddr, SecureServing: o.secureMetrics, TLSOpts: tlsOpts}
	if o.secureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return nil, err
	}
	return ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsOpts,
		HealthProbeBindAddress: o.probeAddr,
		LeaderElection:         false,
		Cache:                  wiring.CacheOptions(o.nodeName, o.namespace),
	})
}

// setupNode adds what the daemon does on its node: the probe engine (workers, result cache,
// status writer, Lease heartbeat, and the controller that keeps the workers in step with the
// NodePodProbe spec and the node's pods) and the CRR executor (preStop, CRI stop, status).
func setupNode(mgr ctrl.Manager, o options, rt cri.Runtime, kubeletVersion string) error {
	if _, err := wiring.Setup(mgr, wiring.Options{
		NodeName: o.nodeName, Namespace: o.namespace, Runtime: rt,
		UserAgent: prober.UserAgent(kubeletVersion), Recorder: mgr.GetEventRecorder(EventRecorderName),
		WriteWindow:        o.writeWindow,
		FailureWriteWindow: o.failureWriteWindow,
	}); err != nil {
		return fmt.Errorf("setting up the probe engine: %w", err)
	}
	if err := (&recreate.Executor{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Runtime: rt, NodeName: o.nodeName,
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
