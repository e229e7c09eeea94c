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

// Package measure holds what the benchmark commands read about their own process: CPU time,
// memory, and the distribution of durations observed in the measured window.
package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/memlimit"
)

// CPUSeconds returns the user and system CPU time of this process.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// StatusMiB returns a size field of /proc/self/status (VmRSS, VmHWM) in MiB.
func StatusMiB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// ProcessesCPUSeconds returns the CPU time of every process whose name (comm, at most 15
// characters) starts with one of prefixes, including the children they have waited for: for a
// container runtime, the runc and exec'd processes of its shims.
func ProcessesCPUSeconds(prefixes ...string) float64 {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks float64
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		comm, match := s[open+1:end], false
		for _, pre := range prefixes {
			match = match || strings.HasPrefix(comm, pre)
		}
		f := strings.Fields(s[end+1:])
		if !match || len(f) < 15 {
			continue
		}
		for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime (fields 14-17)
			v, _ := strconv.ParseFloat(f[i], 64)
			ticks += v
		}
	}
	return ticks / 100 // USER_HZ
}

// StartProfile writes <dir>/<name>.cpu.pprof until the returned function is called, and then
// <name>.heap.pprof; nothing when dir is empty.
func StartProfile(dir, name string) (stop func()) {
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name+".cpu.pprof"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return func() {}
	}
	_ = pprof.StartCPUProfile(f)
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
		if h, err := os.Create(filepath.Join(dir, name+".heap.pprof")); err == nil {
			_ = pprof.WriteHeapProfile(h)
			_ = h.Close()
		}
	}
}

// Ms returns d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Durations records durations while On.
type Durations struct {
	On atomic.Bool
	mu sync.Mutex
	d  []time.Duration
}

// Add records d if recording is on.
func (r *Durations) Add(d time.Duration) {
	if !r.On.Load() {
		return
	}
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
}

// Percentiles returns the 50th and 99th percentiles and the maximum, in milliseconds.
func (r *Durations) Percentiles() (p50, p99, maxMs float64) {
	r.mu.Lock()
	d := append([]time.Duration(nil), r.d...)
	r.mu.Unlock()
	if len(d) == 0 {
		return 0, 0, 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return Ms(d[len(d)*50/100]), Ms(d[len(d)*99/100]), Ms(d[len(d)-1])
}

// DaemonMemoryLimit is the soft memory limit the daemon sets in the DaemonSet the manager ships
// (--memory-limit=auto: a fraction of the container's memory limit), for our side to run under.
func DaemonMemoryLimit() int64 {
	limits := daemonset.DefaultResources().Limits
	return memlimit.FromContainer(limits.Memory().Value())
}
