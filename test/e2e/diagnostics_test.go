//go:build e2e

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

package e2e

import (
	"fmt"
	"os/exec"

	. "github.com/onsi/ginkgo/v2"

	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
)

func kubectl(args ...string) (string, error) {
	return project.Run(exec.Command(envOr("KUBECTL", "kubectl"), args...))
}

// dumpDiagnostics prints the state of the failed spec's namespaces and the operator's logs.
func dumpDiagnostics() {
	section := func(title string, args ...string) {
		out, err := kubectl(args...)
		if err != nil {
			out += "\n(" + err.Error() + ")"
		}
		_, _ = fmt.Fprintf(GinkgoWriter, "\n===== %s\n%s\n", title, out)
	}
	for _, ns := range specNamespaces {
		section("objects in "+ns, "get", "pods,deploy,crr,elp", "-n", ns, "-o", "wide")
		section("events in "+ns, "get", "events", "-n", ns, "--sort-by=.lastTimestamp")
		section("policies in "+ns, "get", "elp", "-n", ns, "-o", "yaml")
	}
	section("nodes", "get", "nodes", "-o", "wide")
	section("operator", "get", "pods,deploy,ds,lease", "-n", operatorNS, "-o", "wide")
	section("nodepodprobes", "get", "nodepodprobes", "-o", "yaml")
	section("manager logs", "logs", "-n", operatorNS, "-l", "control-plane=controller-manager",
		"--tail=60", "--all-containers", "--prefix")
	section("daemon logs (every node's)", "logs", "-n", operatorNS, "-l", "app.kubernetes.io/component=daemon",
		"--tail=80", "--all-containers", "--prefix")
}
