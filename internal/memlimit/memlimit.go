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

// Package memlimit sets a process's soft memory limit (the Go runtime's GOMEMLIMIT): the node
// daemon's and the manager's --memory-limit.
package memlimit

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Resolve turns the value of --memory-limit into bytes (0: none): "auto" is FromContainer of the
// container's limit (none without one), anything else a non-negative quantity. containerLimit is
// ContainerLimit, passed in for tests.
func Resolve(flagValue string, containerLimit func() (int64, bool)) (int64, error) {
	if flagValue == "auto" {
		if cl, ok := containerLimit(); ok {
			return FromContainer(cl), nil
		}
		return 0, nil
	}
	q, err := resource.ParseQuantity(flagValue)
	if err != nil {
		return 0, fmt.Errorf("--memory-limit %q: must be auto, 0 or a quantity such as 192Mi: %w", flagValue, err)
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("--memory-limit %q: must not be negative (0 means no limit)", flagValue)
	}
	return q.Value(), nil
}

// FromContainer returns the soft limit the daemon sets by default: three quarters of its
// container's memory limit. Without a soft limit the heap grows to twice its live size before a
// collection and memory freed after a burst (every worker probing at once after a restart,
// probes timing out together) goes back to the system slowly, so a busy daemon sat at 200-330
// MiB against the DaemonSet's 256 MiB limit; under a soft limit the runtime collects and returns
// memory before the kernel would kill the container. A quarter is left for what the limit
// cannot make the runtime free (goroutine stacks in use, bursts). A soft limit close to the live
// size makes the collector run all the time (its CPU is capped by the runtime at about half),
// hence no fixed default.
func FromContainer(containerLimit int64) int64 { return containerLimit / 4 * 3 }

// ContainerLimit reads this process's memory limit from its cgroup (v2, then v1); false when
// there is none.
func ContainerLimit() (int64, bool) {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v <= 0 || v >= 1<<62 { // "max", or v1's page-rounded "unlimited"
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// Apply makes limit (bytes; 0 or less: none) the soft memory limit, unless GOMEMLIMIT is set in
// the environment: the runtime applied that one at start and an explicit setting wins. It returns
// the limit in force (math.MaxInt64 when there is none).
func Apply(limit int64) int64 {
	if os.Getenv("GOMEMLIMIT") == "" {
		if limit <= 0 {
			limit = noLimit
		}
		debug.SetMemoryLimit(limit)
	}
	return debug.SetMemoryLimit(-1)
}

const noLimit = 1<<63 - 1
