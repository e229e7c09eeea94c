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

// Command benchscale measures the manager at scale against envtest's real kube-apiserver and
// etcd: enrolled pods in Deployments of perWorkload replicas on nodes of perNode pods (100,000
// pods, 2,000 workloads, 5,000 nodes at full size). The benchmark plays the kubelets (pod status)
// and the node daemons (NodePodProbeReport status, Leases); the manager is the real binary built from
// ./cmd, run as its own process with the shipped RBAC, so that its RSS and CPU are its own.
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s/1.37.2-linux-amd64 go run ./test/benchscale -pods 10000,25000,50000
//
// For each size it reports the mapping controller's cold start (manager start to every
// NodePodProbe spec correct; its CPU and RSS; NodePodProbe writes per node), the steady memory,
// and rounds of simultaneous liveness failures (decisions/s, status write to request latency,
// the maxUnavailable budget). -strip=true,false runs the manager with and without
// --strip-cached-objects on the same cluster. See docs/development.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

type options struct {
	sizes                                 []int
	perWorkload, perNode, namespaces      int
	failures, failingWorkloads, rounds    int
	maxUnavailable                        int
	strip                                 []bool
	managerBin, logDir                    string
	managerArgs                           []string
	writers, daemonWriters                int
	settle, convergeTimeout, roundTimeout time.Duration
	restoreTimeout                        time.Duration
	profile                               time.Duration
}

func main() {
	var o options
	var sizes, strip, managerArgs string
	var timeout time.Duration
	flag.StringVar(&sizes, "pods", "10000", "Comma-separated cluster sizes in enrolled pods, each on a fresh control plane.")
	flag.IntVar(&o.perWorkload, "pods-per-workload", 50, "Replicas of each Deployment.")
	flag.IntVar(&o.perNode, "pods-per-node", 20, "Enrolled pods per node.")
	flag.IntVar(&o.namespaces, "namespaces", 20, "Namespaces the workloads are spread over, one policy each.")
	flag.IntVar(&o.failures, "failures", 1000, "Liveness failures reported at once per round.")
	flag.IntVar(&o.failingWorkloads, "failing-workloads", 200, "Workloads the failures are spread over.")
	flag.IntVar(&o.maxUnavailable, "max-unavailable", 4,
		"The policies' maxUnavailable: below failures/failing-workloads, so that the budget binds.")
	flag.IntVar(&o.rounds, "rounds", 2, "Rounds of failures per manager run.")
	flag.StringVar(&strip, "strip", "true", "Comma-separated --strip-cached-objects values to run the manager with.")
	flag.StringVar(&o.managerBin, "manager-bin", "", "A manager binary to run instead of building ./cmd.")
	flag.StringVar(&o.logDir, "log-dir", "", "Keep the manager's logs in this directory (default: deleted with the cluster).")
	flag.StringVar(&managerArgs, "manager-args", "", "Extra manager flags, space-separated (e.g. --kube-api-qps=-1).")
	flag.IntVar(&o.writers, "writers", 64, "Concurrent clients creating the cluster.")
	flag.IntVar(&o.daemonWriters, "daemon-writers", 200, "Concurrent NodePodProbeReport status writes (simulated daemons).")
	flag.DurationVar(&o.settle, "settle", 10*time.Second, "How long NodePodProbe writes are still counted after convergence.")
	flag.DurationVar(&o.convergeTimeout, "converge-timeout", 30*time.Minute, "Bound on the cold start.")
	flag.DurationVar(&o.roundTimeout, "round-timeout", 5*time.Minute, "Bound on one round of failures.")
	flag.DurationVar(&o.restoreTimeout, "restore-timeout", 20*time.Minute,
		"Bound on the recovery after a round (every request carried out, the manager idle).")
	flag.DurationVar(&o.profile, "profile", 0,
		"Take CPU profiles of kube-apiserver and of the manager this long from the start of each round, into -log-dir.")
	flag.DurationVar(&timeout, "timeout", 3*time.Hour, "Bound on the whole benchmark.")
	statusWrites := flag.Int("status-writes", 0,
		"Instead of the scale run: this many status writes of each kind (NodePodProbeReport at each -status-pods size, "+
			"a pod status patch for reference), with the API server's and etcd's CPU per write.")
	statusPods := flag.String("status-pods", "1,110", "Comma-separated pods per node (NodePodProbe spec) for -status-writes.")
	flag.Parse()
	if *statusWrites > 0 {
		ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
		counts, err := parseInts(*statusPods)
		if err != nil {
			fatal(fmt.Errorf("-status-pods: %w", err))
		}
		if err := statusWriteCost(counts, *statusWrites); err != nil {
			fatal(err)
		}
		return
	}

	var err error
	if o.sizes, err = parseInts(sizes); err != nil {
		fatal(fmt.Errorf("-pods: %w", err))
	}
	for s := range strings.SplitSeq(strip, ",") {
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			fatal(fmt.Errorf("-strip: %w", err))
		}
		o.strip = append(o.strip, b)
	}
	o.managerArgs = strings.Fields(managerArgs)
	if o.logDir != "" {
		// Checked before the cluster is populated, which takes minutes at 100,000 pods.
		if err := os.MkdirAll(o.logDir, 0o755); err != nil {
			fatal(fmt.Errorf("-log-dir: %w", err))
		}
	}
	if o.failures%o.failingWorkloads != 0 {
		fatal(fmt.Errorf("-failures %d must be a multiple of -failing-workloads %d", o.failures, o.failingWorkloads))
	}
	if o.rounds*o.failures/o.failingWorkloads > o.perWorkload {
		fatal(fmt.Errorf("-rounds %d of %d failures per workload need more than %d pods per workload",
			o.rounds, o.failures/o.failingWorkloads, o.perWorkload))
	}
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr)))

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	results, err := run(ctx, o)
	cancelTimeout()
	cancel()
	printSummary(os.Stdout, o, results)
	if err != nil {
		fatal(err)
	}
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchscale:", err)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// run measures every size on its own control plane, which it stops and deletes before the next.
func run(ctx context.Context, o options) ([]result, error) {
	bin := o.managerBin
	if bin == "" {
		dir, err := os.MkdirTemp("", "benchscale-bin-")
		if err != nil {
			return nil, err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		logf("building the manager (./cmd)")
		if bin, err = buildManager(ctx, dir); err != nil {
			return nil, fmt.Errorf("building the manager: %w", err)
		}
	}
	var results []result
	for _, size := range o.sizes {
		rs, err := runSize(ctx, o, size, bin)
		results = append(results, rs...)
		if err != nil {
			return results, fmt.Errorf("%d pods: %w", size, err)
		}
	}
	return results, nil
}

func runSize(ctx context.Context, o options, size int, bin string) ([]result, error) {
	l, err := newLayout(size, o.perWorkload, o.perNode, o.namespaces)
	if err != nil {
		return nil, err
	}
	logf("== %d pods, %d workloads, %d nodes: starting envtest (load %s)", l.pods, l.workloads, l.nodes, loadAvg())
	cl, err := startCluster()
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	pop, err := populate(ctx, cl, l, o)
	if err != nil {
		return nil, err
	}
	cp := controlPlaneRSS()
	logf("populated in %s (%.0f pod writes/s); kube-apiserver %.0f MiB, etcd %.0f MiB (load %s)",
		pop.took.Round(time.Second), pop.podWritesPer, mib(cp["kube-apiserver"]), mib(cp["etcd"]), loadAvg())
	w := newWatcher(l, pop.pods)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := w.start(wctx, cl); err != nil {
		return nil, err
	}
	var results []result
	for i, strip := range o.strip {
		if i > 0 {
			if err := resetCluster(ctx, cl, w, l); err != nil {
				return results, err
			}
		}
		r, err := runManager(ctx, cl, bin, w, l, pop, o, strip)
		if err != nil {
			return results, fmt.Errorf("strip=%v: %w", strip, err)
		}
		results = append(results, r)
		r.print(os.Stdout)
	}
	return results, nil
}
