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

package memlimit

import (
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })

	t.Setenv("GOMEMLIMIT", "")
	if got := Apply(192 << 20); got != 192<<20 {
		t.Errorf("Apply(192 MiB) = %d", got)
	}
	if got := Apply(0); got != noLimit {
		t.Errorf("Apply(0) = %d, want no limit", got)
	}

	// An explicit GOMEMLIMIT (applied by the runtime at start) is left alone.
	debug.SetMemoryLimit(300 << 20)
	t.Setenv("GOMEMLIMIT", "300MiB")
	if got := Apply(192 << 20); got != 300<<20 {
		t.Errorf("with GOMEMLIMIT set, Apply = %d, want 300 MiB kept", got)
	}
}

func TestFromContainer(t *testing.T) {
	if got := FromContainer(256 << 20); got != 192<<20 {
		t.Errorf("FromContainer(256 MiB) = %d, want 192 MiB", got)
	}
}
