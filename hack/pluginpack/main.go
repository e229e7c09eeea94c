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

// Command pluginpack packs the kubectl plugin's release binaries as krew installs them: one
// .tar.gz per platform holding the binary and the LICENSE, and the krew plugin manifest that
// names each archive with its URL and SHA-256. make release runs it (hack/release.sh). The
// archives are reproducible: the same binaries give the same bytes.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "the release's version, vX.Y.Z[-pre] (required)")
	flag.StringVar(&o.binDir, "bin-dir", "", "the directory holding kubectl-enhancedliveness-<os>-<arch>[.exe] (required)")
	flag.StringVar(&o.license, "license", "LICENSE", "the license file each archive carries")
	flag.StringVar(&o.out, "out", "", "where the archives and the manifest are written (required)")
	flag.StringVar(&o.urlBase, "url-base", "", "the URL the archives are downloaded from, without the file name (required)")
	flag.StringVar(&o.platforms, "platforms", "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64,windows/arm64",
		"the platforms to pack, os/arch comma-separated")
	flag.Parse()
	files, err := pack(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pluginpack:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
}
