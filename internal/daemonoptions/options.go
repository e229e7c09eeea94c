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

// Package daemonoptions holds the node daemon's command-line flags: the daemon parses its command line
// with them, and the manager checks the daemon arguments it is asked to pass through
// (--daemon-arg) against the very same flag set before it writes them into the DaemonSet.
//
// It must stay light: the manager links it, so it imports none of the daemon's packages that
// register metrics (the report writer's defaults are repeated here and a test keeps them equal).
package daemonoptions

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/memlimit"
)

// Defaults of the report writer (internal/daemon/report: DefaultWriteWindow, DefaultFailureWindow,
// DefaultReportBudget).
const (
	DefaultStatusWriteWindow  = 300 * time.Millisecond
	DefaultFailureWriteWindow = 20 * time.Millisecond
	DefaultReportBudget       = 1 << 20
)

// Bounds of --report-budget-bytes. The least holds one pod's largest entry (64 failing probes
// with the longest names and 256-byte messages, about 52 KiB) beside the status's own fields, so
// a budget never leaves out a namespace only for its pods' size. The most keeps the whole object
// under the 1.5 MiB etcd stores in one request with its metadata, whose managedFields list every
// omitted namespace again (about 72 KiB for 1000): a report over it is refused, and the node
// loses every result (the API server first drops its managedFields to fit it).
const (
	MinReportBudget = 64 << 10
	MaxReportBudget = 1280 << 10
)

// Options are the daemon's settings.
type Options struct {
	NodeName, Namespace, CRIEndpoint string
	CRITimeout, WriteWindow          time.Duration
	FailureWriteWindow               time.Duration
	ReportBudget                     int
	KubeletVersion                   string
	MetricsAddr, ProbeAddr           string
	SecureMetrics, EnableHTTP2       bool
	MemoryLimit                      string
	Zap                              zap.Options
}

// Bind registers every daemon flag on fs (the --zap-* logging flags included); defaults that come
// from the environment (NODE_NAME, POD_NAMESPACE) are read now.
func Bind(fs *flag.FlagSet) *Options {
	o := &Options{}
	fs.StringVar(&o.NodeName, "node-name", os.Getenv("NODE_NAME"),
		"Name of the node this daemon runs on (default: $NODE_NAME, set from the downward API).")
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = appsv1alpha1.DefaultOperatorNamespace
	}
	fs.StringVar(&o.Namespace, "namespace", ns, "Operator namespace that holds the daemon's Lease (default: $POD_NAMESPACE).")
	fs.StringVar(&o.CRIEndpoint, "cri-endpoint", "",
		"CRI runtime endpoint, e.g. unix:///run/containerd/containerd.sock; auto-detected (containerd, CRI-O) when empty.")
	fs.DurationVar(&o.CRITimeout, "cri-timeout", 10*time.Second, "Connection timeout and per-call timeout of CRI calls.")
	fs.DurationVar(&o.WriteWindow, "status-write-window", DefaultStatusWriteWindow,
		"How long probe transitions are gathered into one NodePodProbeReport status patch.")
	fs.DurationVar(&o.FailureWriteWindow, "failure-write-window", DefaultFailureWriteWindow,
		"How long after the previous status patch a new liveness failure waits to be written (at most --status-write-window).")
	fs.IntVar(&o.ReportBudget, "report-budget-bytes", DefaultReportBudget,
		fmt.Sprintf("Most bytes the NodePodProbeReport status may take, JSON-encoded; over it, the results of the namespaces with the most probe states are left out (status.omittedNamespaces). From %d to %d.",
			MinReportBudget, MaxReportBudget))
	fs.StringVar(&o.KubeletVersion, "kubelet-version", "",
		"Kubelet version for the probes' User-Agent (kube-probe/<major>.<minor>); read from the Node object when empty.")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":10290",
		"Address of the metrics endpoint (the daemon runs with hostNetwork); 0 disables it.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":10291", "Address of the /healthz and /readyz endpoints.")
	fs.BoolVar(&o.SecureMetrics, "metrics-secure", true, "Serve metrics over HTTPS with authentication and authorization.")
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", false, "Enable HTTP/2 for the metrics server.")
	fs.StringVar(&o.MemoryLimit, "memory-limit", "auto",
		"Soft memory limit of the Go runtime: auto (3/4 of the container's memory limit, none without one), a quantity such as 192Mi, or 0 (none). GOMEMLIMIT in the environment wins.")
	o.Zap.BindFlags(fs)
	return o
}

// Validate checks the settings that do not depend on where the daemon runs (the node name and
// the container's memory limit are only known there).
func (o *Options) Validate() error {
	var errs []error
	if o.WriteWindow <= 0 || o.FailureWriteWindow <= 0 || o.FailureWriteWindow > o.WriteWindow {
		errs = append(errs, fmt.Errorf("--status-write-window (%s) and --failure-write-window (%s) must be positive, "+
			"and --failure-write-window not longer than --status-write-window", o.WriteWindow, o.FailureWriteWindow))
	}
	if o.ReportBudget < MinReportBudget || o.ReportBudget > MaxReportBudget {
		errs = append(errs, fmt.Errorf("--report-budget-bytes (%d) must be at least %d (64 KiB: one pod's largest entry and the report's own fields) "+
			"and at most %d (1.25 MiB: the report with its metadata stays under the API server's 1.5 MiB request limit)",
			o.ReportBudget, MinReportBudget, MaxReportBudget))
	}
	if o.CRITimeout <= 0 {
		errs = append(errs, fmt.Errorf("--cri-timeout (%s) must be positive", o.CRITimeout))
	}
	if _, err := memlimit.Resolve(o.MemoryLimit, func() (int64, bool) { return 0, false }); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Parse parses args as the daemon's command line would be parsed (without Validate); the flag
// set's own output (usage) is discarded, its error names the flag.
func Parse(args []string) (*Options, error) {
	fs := flag.NewFlagSet("daemon", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := Bind(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: the daemon takes flags only", fs.Arg(0))
	}
	return o, nil
}

// Names returns the names of every daemon flag, for messages and documentation checks.
func Names() []string {
	fs := flag.NewFlagSet("daemon", flag.ContinueOnError)
	Bind(fs)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}
