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
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// buildManager builds the manager binary from this checkout (./cmd) into dir.
func buildManager(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "manager")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd")
	cmd.Dir = testutil.RepoRoot()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return bin, cmd.Run()
}

// managerProc is the real manager binary running against the envtest API server as its own
// process, so that its memory and CPU are its own: the benchmark's clients, caches and
// population work would otherwise be counted with it.
type managerProc struct {
	cmd        *exec.Cmd
	pid        string
	started    time.Time
	metricsURL string
	pprofURL   string // empty: not served
	logPath    string
	logFile    *os.File
	exited     chan struct{}

	mu        sync.Mutex
	workersAt map[string]time.Time // controller name -> when it logged "Starting workers"
	liveHeap  uint64               // heap marked live by the last GC (GODEBUG=gctrace=1)
	gcs       int
	samples   []sample
}

type sample struct {
	at  time.Time
	rss uint64
	cpu time.Duration
}

// gcLine matches gctrace's "A->B->C MB": C is the heap marked live by that cycle.
var gcLine = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)

// startManager runs bin with the benchmark's flags, then extra (e.g. --kube-api-qps); webhooks
// are off (pods are created as the webhook would leave them) and so are leader election and
// the health endpoint. Metrics are served on a free loopback port, plain HTTP.
func startManager(cl *cluster, bin, logDir string, profile bool, extra []string) (*managerProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	pprof := make([]string, 0, 1+len(extra))
	pprofURL := ""
	if profile {
		pport, err := freePort()
		if err != nil {
			return nil, err
		}
		pprofURL = fmt.Sprintf("http://127.0.0.1:%d", pport)
		pprof = append(pprof, fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", pport))
	}
	if logDir == "" {
		logDir = cl.dir
	}
	m := &managerProc{metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", port), pprofURL: pprofURL,
		logPath: filepath.Join(logDir, fmt.Sprintf("manager-%s.log", time.Now().Format("150405"))),
		exited:  make(chan struct{}), workersAt: map[string]time.Time{}}
	if m.logFile, err = os.Create(m.logPath); err != nil {
		return nil, err
	}
	args := append([]string{"--kubeconfig=" + cl.kubeconfig,
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port), "--metrics-secure=false",
		"--health-probe-bind-address=0", "--leader-elect=false",
		"--daemon-image=registry.example/enhanced-liveness-daemon:bench", "--manager-deployment=",
		"--global-restarts-per-minute=0", "--zap-log-level=info"}, append(pprof, extra...)...)
	m.cmd = exec.Command(bin, args...)
	m.cmd.Env = append(os.Environ(), "ENABLE_WEBHOOKS=false", "POD_NAMESPACE="+opNamespace, "GODEBUG=gctrace=1")
	m.cmd.Stdout = m.logFile
	stderr, err := m.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	// Its own process group: a signal to the benchmark's terminal does not reach it first.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	m.started = time.Now()
	if err := m.cmd.Start(); err != nil {
		return nil, err
	}
	m.pid = strconv.Itoa(m.cmd.Process.Pid)
	go m.readLog(stderr)
	go m.sample()
	return m, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// readLog copies the manager's stderr to its log file, timestamps the controllers' start and
// follows the GC's live heap. It closes m.exited when the process is gone.
func (m *managerProc) readLog(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		_, _ = fmt.Fprintln(m.logFile, line)
		if g := gcLine.FindStringSubmatch(line); g != nil {
			live, _ := strconv.ParseUint(g[3], 10, 64)
			m.mu.Lock()
			m.liveHeap = live << 20
			m.gcs++
			m.mu.Unlock()
			continue
		}
		if strings.Contains(line, "Starting workers") {
			if _, name, ok := strings.Cut(line, `"controller": "`); ok {
				name, _, _ = strings.Cut(name, `"`)
				m.mu.Lock()
				m.workersAt[name] = time.Now()
				m.mu.Unlock()
			}
		}
	}
	_ = m.cmd.Wait()
	close(m.exited)
}

// sample records the process's RSS and CPU time every 200 ms.
func (m *managerProc) sample() {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-m.exited:
			return
		case <-t.C:
			st, err1 := readProcStatus(m.pid)
			cpu, err2 := readProcCPU(m.pid)
			if err1 != nil || err2 != nil {
				continue
			}
			m.mu.Lock()
			m.samples = append(m.samples, sample{at: time.Now(), rss: st.rss, cpu: cpu})
			m.mu.Unlock()
		}
	}
}

// usage is the manager's resources over a window.
type usage struct {
	cpu      time.Duration // CPU time used in the window
	wall     time.Duration
	peakRSS  uint64 // highest sampled RSS in the window
	endRSS   uint64
	liveHeap uint64 // heap marked live by the last GC before the window's end
}

func (u usage) cores() float64 { return u.cpu.Seconds() / u.wall.Seconds() }

// now samples the process once, for the edges of a window.
func (m *managerProc) now() sample {
	st, _ := readProcStatus(m.pid)
	cpu, _ := readProcCPU(m.pid)
	return sample{at: time.Now(), rss: st.rss, cpu: cpu}
}

func (m *managerProc) usage(from, to sample) usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := usage{cpu: to.cpu - from.cpu, wall: to.at.Sub(from.at), peakRSS: max(from.rss, to.rss), endRSS: to.rss,
		liveHeap: m.liveHeap}
	for _, s := range m.samples {
		if !s.at.Before(from.at) && !s.at.After(to.at) {
			u.peakRSS = max(u.peakRSS, s.rss)
		}
	}
	return u
}

// nextGC waits for the manager's next garbage collection (the runtime forces one every two
// minutes at the latest) and returns the heap it marked live: the memory the manager really
// holds, without the garbage that RSS also counts.
func (m *managerProc) nextGC(ctx context.Context) (uint64, error) {
	m.mu.Lock()
	n := m.gcs
	m.mu.Unlock()
	deadline := time.Now().Add(150 * time.Second)
	for {
		m.mu.Lock()
		gcs, live := m.gcs, m.liveHeap
		m.mu.Unlock()
		if gcs > n {
			return live, nil
		}
		if err := m.alive(); err != nil {
			return 0, err
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no garbage collection in 150 s")
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (m *managerProc) workersStarted(controller string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.workersAt[controller]
	return t, ok
}

func (m *managerProc) alive() error {
	select {
	case <-m.exited:
		return fmt.Errorf("the manager exited (%v); its log: %s", m.cmd.ProcessState, m.logPath)
	default:
		return nil
	}
}

// stop ends the manager: SIGTERM, then SIGKILL after 15 s. Only this process is signalled.
func (m *managerProc) stop() {
	if m.alive() == nil {
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.exited:
		case <-time.After(15 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.exited
		}
	}
	_ = m.logFile.Close()
}
