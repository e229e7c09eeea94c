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
	"strings"
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

func TestResolve(t *testing.T) {
	limited := func() (int64, bool) { return 256 << 20, true }
	unlimited := func() (int64, bool) { return 0, false }
	for _, tc := range []struct {
		value   string
		cgroup  func() (int64, bool)
		want    int64
		wantErr string
	}{
		{value: "auto", cgroup: limited, want: 192 << 20},
		{value: "auto", cgroup: unlimited, want: 0},
		{value: "160Mi", cgroup: limited, want: 160 << 20},
		{value: "0", cgroup: limited, want: 0},
		{value: "-1Mi", cgroup: limited, wantErr: "must not be negative"},
		{value: "lots", cgroup: limited, wantErr: "must be auto, 0 or a quantity"},
	} {
		got, err := Resolve(tc.value, tc.cgroup)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--memory-limit") {
				t.Errorf("Resolve(%q) error = %v, want one naming --memory-limit and %q", tc.value, err, tc.wantErr)
			}
		case err != nil || got != tc.want:
			t.Errorf("Resolve(%q) = %d, %v; want %d", tc.value, got, err, tc.want)
		}
	}
}
