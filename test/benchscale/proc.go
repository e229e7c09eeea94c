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
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of utime/stime in /proc/<pid>/stat: USER_HZ, 100 on every Linux ABI.
const userHZ = 100

type procStatus struct {
	rss, hwm uint64 // bytes: resident now, and its peak (VmHWM)
}

// readProcStatus reads VmRSS and VmHWM of a process.
func readProcStatus(pid string) (procStatus, error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return procStatus{}, err
	}
	var st procStatus
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, _ := strconv.ParseUint(f[0], 10, 64)
		switch key {
		case "VmRSS":
			st.rss = n << 10
		case "VmHWM":
			st.hwm = n << 10
		}
	}
	return st, nil
}

// readProcCPU returns the user + system CPU time a process has used.
func readProcCPU(pid string) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0, err
	}
	s := string(b)
	// Fields after "(comm)": state is field 3 of the line, utime and stime fields 14 and 15.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%s/stat", pid)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parsing /proc/%s/stat", pid)
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute load averages, as uptime prints them.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
