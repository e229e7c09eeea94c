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

// Package version is the identity of a build of the manager and the node daemon: the version
// and git revision stamped at link time (the -X flags that `hack/version.sh ldflags` prints, used
// by `make build`, hack/imagebuilder and the Dockerfile). Both binaries print it for --version,
// export it as enhanced_liveness_build_info and send it as the User-Agent of their API clients.
package version

import (
	"fmt"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// Set by the linker (-X <this package>.version=0.1.0 -X <this package>.revision=<commit>); a
// build without them (go run, go test) is Unstamped.
var (
	version  string
	revision string
)

// Unstamped is the version and revision of a build that was not stamped.
const Unstamped = "unknown"

// Project names the project in the User-Agent, after the component's own product token.
const Project = "enhanced-liveness-operator"

// Info is one build's identity.
type Info struct {
	// Version is the release version, semver without a leading v (0.1.0, 0.2.0-rc.1).
	Version string
	// Revision is the git commit the binary was built from (12 hex digits), with -dirty when the
	// working tree had uncommitted changes.
	Revision string
	// GoVersion is the Go toolchain that compiled it (go1.26.8).
	GoVersion string
	// Platform is GOOS/GOARCH.
	Platform string
}

// Get returns the running binary's identity.
func Get() Info {
	return Info{
		Version:   orUnstamped(version),
		Revision:  orUnstamped(revision),
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

func orUnstamped(s string) string {
	if s == "" {
		return Unstamped
	}
	return s
}

// String is what --version prints: the component, then the build, e.g.
// "enhanced-liveness-manager 0.1.0 (revision 0123456789ab, go1.26.8, linux/amd64)".
func (i Info) String(component string) string {
	return fmt.Sprintf("%s %s (revision %s, %s, %s)", component, i.Version, i.Revision, i.GoVersion, i.Platform)
}

// UserAgent is the User-Agent of the component's API clients, in client-go's shape
// (<command>/<version> (<os>/<arch>) kubernetes/<commit>): e.g.
// "enhanced-liveness-daemon/0.1.0 (linux/amd64) enhanced-liveness-operator/0123456789ab". The API
// server's audit log and its apiserver_request_total metrics name a client by it.
func (i Info) UserAgent(component string) string {
	return fmt.Sprintf("%s/%s (%s) %s/%s", component, i.Version, i.Platform, Project, i.Revision)
}

// BuildInfoMetric is the name of the build-info gauge, after the Prometheus convention
// <namespace>_build_info (a constant 1 whose labels say what is running).
const BuildInfoMetric = "enhanced_liveness_build_info"

// Collector returns the build-info gauge of this build: enhanced_liveness_build_info{version,
// revision, goversion} 1. Each binary registers it on its metrics registry.
func (i Info) Collector() prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: BuildInfoMetric,
		Help: "A metric with a constant 1 value labelled by the version, git revision and Go version the binary was built from.",
	}, []string{"version", "revision", "goversion"})
	g.WithLabelValues(i.Version, i.Revision, i.GoVersion).Set(1)
	return g
}
