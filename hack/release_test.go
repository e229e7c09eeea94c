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
