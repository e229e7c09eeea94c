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

// Command chart keeps the Helm chart (charts/enhanced-liveness-operator) equal to the kustomize
// install:
//
//	generate  writes templates/generated/ from `kustomize build config/default` (and the
//	          network policies of config/network-policy), the values schema from both binaries'
//	          flag sets, and the chart's version (`make chart`, part of `make verify`)
//	check     renders the chart with its default values (`helm template`) and compares it with
//	          `kustomize build config/default`, object by object (`make chart-check`, part of
//	          `make verify`)
//
// usage: go run ./hack/chart generate -kustomize bin/kustomize -version 0.1.0
//
//	go run ./hack/chart check -kustomize bin/kustomize -helm bin/helm
//
// Run from the repository's top directory.
package main

import (
	"flag"
	"fmt"
	"os"
)

// Paths, relative to the repository's top directory.
const (
	chartDir      = "charts/enhanced-liveness-operator"
	generatedDir  = chartDir + "/templates/generated"
	defaultConfig = "config/default"
	networkPolicy = "config/network-policy"
)

// The names config/default gives (its namespace and namePrefix): the chart installs the same
// objects under the same names into the release's namespace.
const (
	installNamespace  = "enhanced-liveness-system"
	namePrefix        = "enhanced-liveness-operator-"
	managerDeployment = namePrefix + "controller-manager"
	managerContainer  = "manager"
	// releaseName is the release `check` renders; the chart's objects do not depend on it.
	releaseName = "enhanced-liveness-operator"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	kustomize := fs.String("kustomize", "bin/kustomize", "the kustomize binary")
	var err error
	switch os.Args[1] {
	case "generate":
		version := fs.String("version", "", "the chart's version and appVersion (semver, no leading v)")
		_ = fs.Parse(os.Args[2:])
		if *version == "" {
			fail(fmt.Errorf("generate: -version is required"))
		}
		err = generate(*kustomize, *version)
	case "check":
		helm := fs.String("helm", "bin/helm", "the helm binary")
		_ = fs.Parse(os.Args[2:])
		err = check(*kustomize, *helm)
	default:
		usage()
	}
	if err != nil {
		fail(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: chart generate -kustomize BIN -version V | chart check -kustomize BIN -helm BIN")
	os.Exit(2)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "chart:", err)
	os.Exit(1)
}
