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

package version

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

var build = Info{Version: "0.1.0", Revision: "0123456789ab", GoVersion: "go1.26.8", Platform: "linux/arm64"}

func TestString(t *testing.T) {
	if got, want := build.String("enhanced-liveness-daemon"),
		"enhanced-liveness-daemon 0.1.0 (revision 0123456789ab, go1.26.8, linux/arm64)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

// client-go's shape: <product>/<version> (<os>/<arch>) <project>/<commit>. The API server takes
// the product token as the field manager of what the client writes.
func TestUserAgent(t *testing.T) {
	if got, want := build.UserAgent("enhanced-liveness-manager"),
		"enhanced-liveness-manager/0.1.0 (linux/arm64) enhanced-liveness-operator/0123456789ab"; got != want {
		t.Errorf("UserAgent = %q, want %q", got, want)
	}
}

func TestCollector(t *testing.T) {
	want := `# HELP enhanced_liveness_build_info A metric with a constant 1 value labelled by the version, git revision and Go version the binary was built from.
# TYPE enhanced_liveness_build_info gauge
enhanced_liveness_build_info{goversion="go1.26.8",revision="0123456789ab",version="0.1.0"} 1
`
	if err := testutil.CollectAndCompare(build.Collector(), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestGetWithoutStamp(t *testing.T) {
	b := Get()
	if b.Version != Unstamped || b.Revision != Unstamped || b.GoVersion == "" || b.Platform == "" {
		t.Errorf("Get() of a test binary = %+v, want version and revision %q and the toolchain's Go version and platform", b, Unstamped)
	}
}
