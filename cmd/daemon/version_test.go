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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The daemon stamped by hack/version.sh prints its build for --version and exits, before it
// needs a node or a container runtime.
func TestDaemonBinaryPrintsItsStampedVersion(t *testing.T) {
	script := exec.Command("../../hack/version.sh", "ldflags")
	script.Env = append(os.Environ(), "VERSION=1.2.3", "GIT_REVISION=abcdefabcdef-dirty")
	ldflags, err := script.Output()
	if err != nil {
		t.Fatalf("hack/version.sh ldflags: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "daemon")
	if out, err := exec.Command("go", "build", "-ldflags", strings.TrimSpace(string(ldflags)), "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the daemon: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("daemon --version: %v\n%s", err, out)
	}
	want := fmt.Sprintf("enhanced-liveness-daemon 1.2.3 (revision abcdefabcdef-dirty, %s, %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if string(out) != want {
		t.Errorf("daemon --version printed %q, want %q", out, want)
	}
}
