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
// Command enginebench measures the daemon's probe engine with N HTTP workers at a fixed period
// against a loopback server, and the kubelet's own pkg/probe/http prober driven the same way
// (one goroutine and ticker per probe, a new request per run). Each side runs in a child process
// of its own, and the HTTP server in a third, so that CPU time and RSS are each side's alone.
// Engines: ours (the daemon's probe manager, with its metrics and result cache), kubelet (the
// prober plus the two metric updates the kubelet's worker makes per run, with the kubelet's own
// metric vectors) and kubelet-bare (the prober alone, the only kubelet side before 2026-12-01).
//
//	go run ./cmd/enginebench -workers 5000 -period 1s -warmup 5s -duration 20s
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/memlimit"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/bench/measure"
)

type config struct {
	mode, target, profile    string
	engines                  string
	workers                  int
	memoryLimit              int64
	period, warmup, duration time.Duration
}

// Report is what a measuring child prints as JSON.
type Report struct {
	Engine      string  `json:"engine"`
	Workers     int     `json:"workers"`
	Probes      int64   `json:"probes"`
	Errors      int64   `json:"errors"`
	Seconds     float64 `json:"seconds"`
	CPUSeconds  float64 `json:"cpuSeconds"`
	CPUPerProbe float64 `json:"cpuSecondsPerProbe"`
	LagP50ms    float64 `json:"lagP50ms"`
	LagP99ms    float64 `json:"lagP99ms"`
	LagMaxms    float64 `json:"lagMaxms"`
	RSS         float64 `json:"rssMiB"`
	PeakRSS     float64 `json:"peakRssMiB"`
	// Where the memory is, at the end of the measured window.
	HeapInuse  float64 `json:"heapInuseMiB"`
	StackInuse float64 `json:"stackInuseMiB"`
	Goroutines int     `json:"goroutines"`
	NumGC      uint32  `json:"numGC"` // GC cycles during the measured window
}

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "driver", "driver | server | ours | kubelet | kubelet-bare")
	flag.StringVar(&c.target, "target", "", "host:port of the HTTP server (children)")
	flag.IntVar(&c.workers, "workers", 5000, "number of HTTP probe workers")
	flag.DurationVar(&c.period, "period", time.Second, "probe period")
	flag.DurationVar(&c.warmup, "warmup", 5*time.Second, "time before measuring (first runs are spread over one period)")
	flag.DurationVar(&c.duration, "duration", 20*time.Second, "measured time")
	flag.StringVar(&c.engines, "engines", "ours,kubelet", "engines to measure, in order (driver)")
	flag.Int64Var(&c.memoryLimit, "memory-limit", measure.DaemonMemoryLimit(),
		"soft memory limit of our side in bytes (0: none); default: the daemon's in the shipped DaemonSet")
	flag.StringVar(&c.profile, "profile", "", "directory for CPU and heap profiles of the measured window (children)")
	flag.Parse()
	var err error
	switch c.mode {
	case "server":
		err = serve()
	case "ours", "kubelet", "kubelet-bare":
		var r Report
		if r, err = measureSide(c); err == nil {
			err = json.NewEncoder(os.Stdout).Encode(r)
		}
	case "driver":
		err = drive(c)
	default:
		err = fmt.Errorf("-mode %q: want driver, server, ours, kubelet or kubelet-bare", c.mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "enginebench:", err)
		os.Exit(1)
	}
}

// serve answers every request with 200 "ok" until stdin closes (the driver exits).
func serve() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(l.Addr().String())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }),
		ReadHeaderTimeout: 5 * time.Second}
	go func() { _, _ = bufio.NewReader(os.Stdin).ReadString('\n'); _ = l.Close() }()
	err = srv.Serve(l)
	if err == http.ErrServerClosed || strings.Contains(fmt.Sprint(err), "use of closed") {
		return nil
	}
	return err
}

func drive(c config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	server := exec.Command(self, "-mode=server")
	stdin, _ := server.StdinPipe()
	out, _ := server.StdoutPipe()
	server.Stderr = os.Stderr
	if err := server.Start(); err != nil {
		return err
	}
	defer func() { _ = stdin.Close(); _ = server.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("server address: %w", err)
	}
	addr = strings.TrimSpace(addr)

	var reports []Report
	for _, mode := range strings.Split(c.engines, ",") {
		if mode != "ours" && mode != "kubelet" && mode != "kubelet-bare" {
			return fmt.Errorf("-engines: unknown engine %q", mode)
		}
		cmd := exec.Command(self, "-mode="+mode, "-target="+addr, "-workers="+strconv.Itoa(c.workers), "-profile="+c.profile,
			"-memory-limit="+strconv.FormatInt(c.memoryLimit, 10),
			"-period="+c.period.String(), "-warmup="+c.warmup.String(), "-duration="+c.duration.String())
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
	fmt.Printf("%d HTTP workers, period %v, measured %v after %v warm-up (GOMAXPROCS=%s), our soft memory limit %d MiB\n",
		c.workers, c.period, c.duration, c.warmup, os.Getenv("GOMAXPROCS"), c.memoryLimit>>20)
	fmt.Printf("%-8s %10s %7s %14s %10s %10s %10s %9s %9s %7s %7s %6s %4s\n", "engine", "probes", "errors", "CPU s/probe",
		"lag p50", "lag p99", "lag max", "RSS MiB", "peak MiB", "heap", "stacks", "gorou.", "GCs")
	for _, r := range reports {
		fmt.Printf("%-8s %10d %7d %14.3g %8.2fms %8.2fms %8.2fms %9.1f %9.1f %7.1f %7.1f %6d %4d\n", r.Engine, r.Probes, r.Errors,
			r.CPUPerProbe, r.LagP50ms, r.LagP99ms, r.LagMaxms, r.RSS, r.PeakRSS, r.HeapInuse, r.StackInuse, r.Goroutines, r.NumGC)
	}
	per := map[string]float64{}
	for _, r := range reports {
		per[r.Engine] = r.CPUPerProbe
	}
	for _, k := range []string{"kubelet", "kubelet-bare"} {
		if per["ours"] > 0 && per[k] > 0 {
			fmt.Printf("CPU per probe, ours / %s: %.2f\n", k, per["ours"]/per[k])
		}
	}
	return nil
}

func measureSide(c config) (Report, error) {
	host, portStr, err := net.SplitHostPort(c.target)
	if err != nil {
		return Report{}, fmt.Errorf("-target: %w", err)
	}
	port, _ := strconv.Atoi(portStr)
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	rec := &measure.Durations{}
	var probes, errs atomic.Int64
	switch c.mode {
	case "ours":
		runOurs(ctx, c, host, port, rec, &probes)
	case "kubelet", "kubelet-bare":
		runKubelet(ctx, c, host, port, rec, &probes, &errs)
	}
	time.Sleep(c.warmup)
	stopProfile := measure.StartProfile(c.profile, c.mode)
	// Failed runs of the measured window only (the first runs of the warm-up are a burst).
	errorsNow := errs.Load
	if c.mode == "ours" {
		errorsNow = func() int64 { return int64(failures()) }
	}
	e0 := errorsNow()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0, n0, t0 := measure.CPUSeconds(), probes.Load(), time.Now()
	rec.On.Store(true)
	time.Sleep(c.duration)
	rec.On.Store(false)
	cpu1, n1, t1 := measure.CPUSeconds(), probes.Load(), time.Now()
	stopProfile()
	runtime.ReadMemStats(&ms1)
	r := Report{Engine: c.mode, Workers: c.workers, Probes: n1 - n0, Errors: errorsNow() - e0, Seconds: t1.Sub(t0).Seconds(), CPUSeconds: cpu1 - cpu0}
	if r.Probes > 0 {
		r.CPUPerProbe = r.CPUSeconds / float64(r.Probes)
	}
	r.LagP50ms, r.LagP99ms, r.LagMaxms = rec.Percentiles()
	r.RSS, r.PeakRSS = measure.StatusMiB("VmRSS"), measure.StatusMiB("VmHWM")
	r.HeapInuse, r.StackInuse = float64(ms1.HeapInuse)/(1<<20), float64(ms1.StackInuse)/(1<<20)
	r.Goroutines, r.NumGC = runtime.NumGoroutine(), ms1.NumGC-ms0.NumGC
	return r, nil
}

// runOurs starts the daemon's probe manager with one pod per worker, as the node controller would,
// under the soft memory limit the daemon applies at start.
func runOurs(ctx context.Context, c config, host string, port int, rec *measure.Durations, probes *atomic.Int64) {
	memlimit.Apply(c.memoryLimit)
	m := prober.NewManager(nil, "kube-probe/1.37", nil)
	m.Addresses = &cri.Addresses{Runtime: benchSandboxes{ip: host}}
	m.LagObserver = func(d time.Duration) { probes.Add(1); rec.Add(d) }
	go func() { _ = m.Start(ctx) }()
	pods := benchPods(c.workers, host, port, c.period)
	targets := make([]prober.Target, 0, c.workers)
	for _, pod := range pods {
		targets = append(targets, prober.Target{
			Key: results.Key{PodUID: pod.UID, Container: "app", Probe: "liveness"}, PodName: pod.Name, Namespace: pod.Namespace,
			Probe: *pod.Spec.Containers[0].LivenessProbe,
		})
	}
	// Start waits for the manager's context; Sync before it is applied when it starts.
	m.Sync(targets, pods)
}

// benchPods are the node's pods, the same objects on both sides: the daemon reads them from its
// pod cache, the kubelet's probe workers each hold theirs. One container "app" with an HTTP
// liveness probe on port, running for an hour.
func benchPods(n int, host string, port int, period time.Duration) []*corev1.Pod {
	started := metav1.NewTime(time.Now().Add(-time.Hour))
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Namespace: "bench", UID: types.UID(fmt.Sprintf("uid-%05d", i))},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", LivenessProbe: &corev1.Probe{
				ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(port))}},
				TimeoutSeconds: 1, PeriodSeconds: int32(period / time.Second), FailureThreshold: 3, SuccessThreshold: 1,
			}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: host, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", ContainerID: fmt.Sprintf("containerd://%05d", i),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			}}},
		})
	}
	return pods
}

// benchSandboxes answers as a runtime whose every pod has one ready sandbox at ip: the bench's
// pods all point at one server.
type benchSandboxes struct{ ip string }

func (b benchSandboxes) ListPodSandbox(_ context.Context, f *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	return []*runtimeapi.PodSandbox{{Id: "sb-" + f.GetLabelSelector()[cri.LabelPodUID], State: runtimeapi.PodSandboxState_SANDBOX_READY,
		Labels: f.GetLabelSelector()}}, nil
}

func (b benchSandboxes) PodSandboxStatus(_ context.Context, id string, _ bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	return &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{Id: id, Network: &runtimeapi.PodSandboxNetworkStatus{Ip: b.ip}}}, nil
}

// failures counts the failed runs of our engine from its metrics.
func failures() float64 {
	mfs, err := prometheusGather()
	if err != nil {
		return -1
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "enhanced_liveness_daemon_probe_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() != "successful" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}
