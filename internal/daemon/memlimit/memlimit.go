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

// Package memlimit sets the node daemon's soft memory limit (the Go runtime's GOMEMLIMIT).
package memlimit

import (
	"os"
	"runtime/debug"
)

// Default is the soft limit the daemon ships with. Without one the heap grows to twice its live
// size before a collection, and memory freed after a burst (every worker probing at once after a
// restart, thousands of probes timing out together) is returned to the system only slowly: at
// 5,000 HTTP workers that was 200-330 MiB against the DaemonSet's 256 MiB container limit. Under
// the limit the runtime collects and returns memory earlier, trading some CPU (bounded by the
// runtime at about half of it) for staying well clear of an OOM kill.
const Default = 128 << 20

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
