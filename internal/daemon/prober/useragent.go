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
package prober

import (
	"fmt"
	"regexp"
	"runtime/debug"
)

// fallbackMinor is used when neither the node nor the build says which Kubernetes this is.
const fallbackMinor = "1.37"

var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// UserAgent returns "kube-probe/<major>.<minor>" for a kubelet version such as "v1.37.2" (the
// node's status.nodeInfo.kubeletVersion), so that applications see the same User-Agent as from
// the kubelet. When kubeletVersion does not parse, the Kubernetes minor of the API library the
// daemon was built with is used.
func UserAgent(kubeletVersion string) string {
	if m := versionRE.FindStringSubmatch(kubeletVersion); m != nil {
		return fmt.Sprintf("kube-probe/%s.%s", m[1], m[2])
	}
	return "kube-probe/" + builtMinor()
}

// builtMinor maps the k8s.io/api module version v0.X.Y to 1.X.
func builtMinor() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path != "k8s.io/api" {
				continue
			}
			if m := versionRE.FindStringSubmatch(d.Version); m != nil && m[1] == "0" {
				return "1." + m[2]
			}
		}
	}
	return fallbackMinor
}
