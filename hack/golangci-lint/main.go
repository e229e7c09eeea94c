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

// Command golangci-lint is golangci-lint with the logcheck module plugin compiled in, built from
// the Go module proxy. It replaces `golangci-lint custom`, which clones golangci-lint's
// repository and so cannot run where only the module proxy is reachable. The versions are pinned
// in this module's go.mod; .golangci.yml enables logcheck as a module plugin, which the blank
// import below registers.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/golangci/golangci-lint/v2/pkg/commands"

	_ "sigs.k8s.io/logtools/logcheck/gclplugin"
)

func main() {
	info := commands.BuildInfo{Version: "(unknown)", Commit: "?", Date: "", GoVersion: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.GoVersion = bi.GoVersion
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/golangci/golangci-lint/v2" {
				info.Version = dep.Version
			}
		}
	}
	if err := commands.Execute(info); err != nil {
		fmt.Fprintf(os.Stderr, "golangci-lint: %v\n", err)
		os.Exit(1)
	}
}
