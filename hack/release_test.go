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

// Package hack holds the scripts of the build; this test runs the release script's preflight.
package hack

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// `make release` runs hack/release.sh --preflight before it builds the OLM tools (minutes on a
// fresh machine): the checks that need nothing built must answer alone, from VERSION only.
func TestReleasePreflight(t *testing.T) {
	cases := []struct {
		version string
		ok      bool
		want    string // part of the output when refused
	}{
		{"v9.9.9", false, `CHANGELOG.md has no section "## 9.9.9 - YYYY-MM-DD"`},
		{"v0.0.0-rc.1", true, ""}, // a pre-release needs no dated section nor a clean tree
		{"not-a-version", false, "is not a semantic version"},
	}
	for _, c := range cases {
		t.Run(c.version, func(t *testing.T) {
			cmd := exec.Command("bash", "release.sh", "--preflight")
			// Nothing but VERSION: no tool, image name or DIST.
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "VERSION=" + c.version}
			out, err := cmd.CombinedOutput()
			if (err == nil) != c.ok {
				t.Fatalf("release.sh --preflight with VERSION=%s: err = %v, want ok = %v; output:\n%s", c.version, err, c.ok, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Errorf("output = %q, want it to contain %q", out, c.want)
			}
		})
	}
}

// The channels of a release and the release it upgrades from, decided from VERSION, PREVIOUS and
// CHANGELOG.md's dated sections before anything is built (hack/release.sh --plan).
func TestReleasePlan(t *testing.T) {
	cases := []struct {
		version, previous string
		ok                bool
		want              string
	}{
		// A pre-release is in candidate only, and upgrades from the newest dated release below it.
		{"v0.2.0-rc.1", "", true, "0.2.0-rc.1: channels candidate (default candidate), previous 0.1.0"},
		// A release is in stable (the default) and candidate.
		{"v0.2.0", "", true, "0.2.0: channels stable,candidate (default stable), previous 0.1.0"},
		// Nothing dated below the first release: no upgrade edge.
		{"v0.1.0", "", true, "previous none"},
		{"v0.0.1-e2e.1", "", true, "previous none"},
		{"v0.0.2-e2e.2", "0.0.1-e2e.1", true, "0.0.2-e2e.2: channels candidate (default candidate), previous 0.0.1-e2e.1"},
		{"v0.2.0-rc.2", "v0.2.0-rc.1", true, "previous 0.2.0-rc.1"},
		{"v0.2.0-rc.10", "0.2.0-rc.9", true, "previous 0.2.0-rc.9"},
		{"v0.2.0", "none", true, "previous none"},
		{"v0.2.0", "0.3.0", false, "PREVIOUS=0.3.0 is not lower than VERSION=0.2.0"},
		{"v0.2.0-rc.1", "0.2.0", false, "PREVIOUS=0.2.0 is not lower than VERSION=0.2.0-rc.1"},
		{"v0.2.0", "0.2", false, `PREVIOUS=0.2: version: "0.2" is not a semantic version`},
	}
	for _, c := range cases {
		t.Run(c.version+"/"+c.previous, func(t *testing.T) {
			cmd := exec.Command("bash", "release.sh", "--plan")
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "VERSION=" + c.version, "PREVIOUS=" + c.previous}
			out, err := cmd.CombinedOutput()
			if (err == nil) != c.ok {
				t.Fatalf("release.sh --plan with VERSION=%s PREVIOUS=%s: err = %v, want ok = %v; output:\n%s", c.version, c.previous, err, c.ok, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Errorf("output = %q, want it to contain %q", out, c.want)
			}
		})
	}
}
