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
// Command execbench measures exec liveness probes through the node's real container runtime, on
// the same running containers with the same command and period: ours (the daemon's probe manager
// with its CRI client, internal/daemon/cri, and check.Exec, metrics and result cache included)
// and kubelet (the kubelet's CRI client, k8s.io/cri-client's remote runtime service built as the
// kubelet builds it, its ExecSync output read as the kubelet's RunInContainer reads it, judged by
// pkg/probe/exec, plus the two metric updates of the kubelet's worker). Each side runs in a child
// process of its own; CPU per probe, ExecSync latency and RSS are each side's alone. The runtime's
// own CPU (containerd, its shims and the runc and command processes they reap) is reported too.
//
//	go run ./cmd/execbench -namespace execbench -command "/app check" -period 1s -duration 20s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/bench/measure"
)

type config struct {
	mode, endpoint, namespace, container, command, engines, ids string
	profile                                                     string
	period, timeout, warmup, duration                           time.Duration
	memoryLimit                                                 int64
}

// Report is what a measuring child prints as JSON.
type Report struct {
	Engine         string  `json:"engine"`
	Containers     int     `json:"containers"`
	Probes         int64   `json:"probes"`
	Failures       int64   `json:"failures"`
	Errors         int64   `json:"errors"`
	CPUSeconds     float64 `json:"cpuSeconds"`
	CPUPerProbe    float64 `json:"cpuSecondsPerProbe"`
	RuntimePerProb float64 `json:"runtimeCpuSecondsPerProbe"`
	P50ms          float64 `json:"execSyncP50ms"`
	P99ms          float64 `json:"execSyncP99ms"`
	Maxms          float64 `json:"execSyncMaxms"`
	RSS            float64 `json:"rssMiB"`
	PeakRSS        float64 `json:"peakRssMiB"`
}

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "driver", "driver | ours | kubelet")
	flag.StringVar(&c.endpoint, "endpoint", cri.DefaultEndpoints[0], "CRI endpoint of the node's runtime")
	flag.StringVar(&c.namespace, "namespace", "execbench", "probe the running containers of the pods of this namespace")
	flag.StringVar(&c.container, "container", "", "only containers of this name (default: all)")
	flag.StringVar(&c.command, "command", "/app check", "exec probe command, split on spaces")
	flag.StringVar(&c.engines, "engines", "ours,kubelet", "engines to measure, in order (driver)")
	flag.StringVar(&c.ids, "ids", "", "container IDs, comma-separated (children)")
	flag.DurationVar(&c.period, "period", time.Second, "probe period (whole seconds)")
	flag.DurationVar(&c.timeout, "timeout", time.Second, "probe timeout (whole seconds)")
	flag.DurationVar(&c.warmup, "warmup", 5*time.Second, "time before measuring (first runs are spread over one period)")
	flag.DurationVar(&c.duration, "duration", 20*time.Second, "measured time")
	flag.Int64Var(&c.memoryLimit, "memory-limit", measure.DaemonMemoryLimit(),
		"soft memory limit of our side in bytes (0: none); default: the daemon's in the shipped DaemonSet")
	flag.StringVar(&c.profile, "profile", "", "directory for CPU and heap profiles of the measured window (children)")
	flag.Parse()
	// cri-client logs every call cut short when a side stops; neither side's logging is measured.
	klog.SetLogger(logr.Discard())
	var err error
	switch c.mode {
	case "ours", "kubelet":
		var r Report
		if r, err = measureSide(c); err == nil {
			err = json.NewEncoder(os.Stdout).Encode(r)
		}
	case "driver":
		err = drive(c)
	default:
		err = fmt.Errorf("-mode %q: want driver, ours or kubelet", c.mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "execbench:", err)
		os.Exit(1)
	}
}

// runningContainers lists the running containers of the pods of namespace.
func runningContainers(ctx context.Context, c config) ([]string, error) {
	rt, err := cri.Connect(ctx, c.endpoint, 10*time.Second)
	if err != nil {
		return nil, err
	}
	list, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{"io.kubernetes.pod.namespace": c.namespace},
	})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, ct := range list {
		if c.container == "" || ct.GetMetadata().GetName() == c.container {
			ids = append(ids, ct.Id)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no running container in namespace %q on %s", c.namespace, c.endpoint)
	}
	return ids, nil
}

func drive(c config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	ids, err := runningContainers(ctx, c)
	cancel()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var reports []Report
	for _, mode := range strings.Split(c.engines, ",") {
		if mode != "ours" && mode != "kubelet" {
			return fmt.Errorf("-engines: unknown engine %q", mode)
		}
		cmd := exec.Command(self, "-mode="+mode, "-endpoint="+c.endpoint, "-ids="+strings.Join(ids, ","),
			"-command="+c.command, "-period="+c.period.String(), "-timeout="+c.timeout.String(),
			"-warmup="+c.warmup.String(), "-duration="+c.duration.String(), "-memory-limit="+strconv.FormatInt(c.memoryLimit, 10), "-profile="+c.profile)
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s report %q: %w", mode, b, err)
		}
		reports = append(reports, r)
	}
	fmt.Printf("exec probes %q in %d containers (namespace %s), period %v, timeout %v, measured %v after %v warm-up, our soft memory limit %d MiB\n",
		c.command, len(ids), c.namespace, c.period, c.timeout, c.duration, c.warmup, c.memoryLimit>>20)
	fmt.Printf("%-8s %7s %6s %6s %12s %12s %10s %10s %10s %8s %8s\n", "engine", "probes", "failed", "errors",
		"CPU s/probe", "runtime s/pr", "p50", "p99", "max", "RSS MiB", "peak")
	for _, r := range reports {
		fmt.Printf("%-8s %7d %6d %6d %12.3g %12.3g %8.1fms %8.1fms %8.1fms %8.1f %8.1f\n", r.Engine, r.Probes, r.Failures, r.Errors,
			r.CPUPerProbe, r.RuntimePerProb, r.P50ms, r.P99ms, r.Maxms, r.RSS, r.PeakRSS)
	}
	if len(reports) == 2 && reports[1].CPUPerProbe > 0 {
		fmt.Printf("CPU per probe, %s / %s: %.2f\n", reports[0].Engine, reports[1].Engine, reports[0].CPUPerProbe/reports[1].CPUPerProbe)
	}
	return nil
}

// counts are a side's results; latencies are those of each ExecSync call. Our side's failures
// and errors are read from the daemon's probe counter (syncFromMetrics).
type counts struct {
	probes, failures, errors atomic.Int64
	latencies                measure.Durations
	fromMetrics              bool
}

// timedExecer records the latency of every ExecSync call of rt.
type timedExecer struct {
	rt interface {
		ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error)
	}
	n *counts
}

// ContainerStatus passes through to the runtime when it reads statuses (our side checks each
// container's owner once).
func (t timedExecer) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	sr, ok := t.rt.(cri.StatusReader)
	if !ok {
		return nil, fmt.Errorf("runtime reads no container status")
	}
	return sr.ContainerStatus(ctx, id, verbose)
}

func (t timedExecer) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	start := time.Now()
	stdout, stderr, err := t.rt.ExecSync(ctx, id, cmd, timeout)
	t.n.latencies.Add(time.Since(start))
	return stdout, stderr, err
}

var runtimeProcesses = []string{"containerd"} // containerd and containerd-shim-runc-v2

func measureSide(c config) (Report, error) {
	ids := strings.Split(c.ids, ",")
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	n := &counts{}
	var err error
	if c.mode == "ours" {
		err = runOurs(ctx, c, ids, n)
	} else {
		err = runKubelet(ctx, c, ids, n)
	}
	if err != nil {
		return Report{}, err
	}
	time.Sleep(c.warmup)
	n.syncFromMetrics()
	stopProfile := measure.StartProfile(c.profile, c.mode)
	// The /proc scan for the runtime's CPU stays outside our own window: it is not probe work.
	rt0 := measure.ProcessesCPUSeconds(runtimeProcesses...)
	cpu0, p0, f0, e0 := measure.CPUSeconds(), n.probes.Load(), n.failures.Load(), n.errors.Load()
	n.latencies.On.Store(true)
	time.Sleep(c.duration)
	n.latencies.On.Store(false)
	cpu1, p1 := measure.CPUSeconds(), n.probes.Load()
	stopProfile()
	rt1 := measure.ProcessesCPUSeconds(runtimeProcesses...)
	n.syncFromMetrics()
	f1, e1 := n.failures.Load(), n.errors.Load()
	r := Report{Engine: c.mode, Containers: len(ids), Probes: p1 - p0, Failures: f1 - f0, Errors: e1 - e0, CPUSeconds: cpu1 - cpu0}
	if r.Probes > 0 {
		r.CPUPerProbe = r.CPUSeconds / float64(r.Probes)
		r.RuntimePerProb = (rt1 - rt0) / float64(r.Probes)
	}
	r.P50ms, r.P99ms, r.Maxms = n.latencies.Percentiles()
	r.RSS, r.PeakRSS = measure.StatusMiB("VmRSS"), measure.StatusMiB("VmHWM")
	return r, nil
}
