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
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The catalog image is what a CatalogSource's spec.image runs, as `opm generate dockerfile`
// builds it FROM the opm image: the file-based catalog under /configs, /bin/opm serving it on
// :50051 and /bin/grpc_health_probe, which OLM runs as the registry pod's probes. It carries no
// pre-built serve cache (building one runs opm), so opm serves without --cache-dir and builds its
// cache under /tmp at start.
const (
	catalogConfigsDir   = "configs"
	catalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"
)

// catalogTools are the binaries of a catalog image, read from <tools>/<os>-<arch>/.
var catalogTools = []string{"opm", "grpc_health_probe"}

// catalogFiles lays out the catalog image for p: the file-based catalog directory catalogDir
// (opm validate's argument: one directory per package) under /configs, and opm and
// grpc_health_probe of p from toolsDir/<os>-<arch>/.
func catalogFiles(catalogDir, toolsDir string, p platform) ([]file, error) {
	files := []file{
		{name: "bin", mode: 0o755, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
		{name: catalogConfigsDir, mode: 0o755, dir: true},
	}
	for _, t := range catalogTools {
		path := filepath.Join(toolsDir, p.os+"-"+p.arch, t)
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("-catalog-tools: %w (hack/build-olm.sh builds %s)", err, strings.Join(catalogTools, " and "))
		}
		if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			return nil, fmt.Errorf("-catalog-tools: %s is not an executable file", path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		files = append(files, file{name: "bin/" + t, mode: 0o755, data: data})
	}
	var yamls int
	err := filepath.WalkDir(catalogDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == catalogDir {
			return err
		}
		rel, err := filepath.Rel(catalogDir, path)
		if err != nil {
			return err
		}
		name := catalogConfigsDir + "/" + filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			files = append(files, file{name: name, mode: 0o755, dir: true})
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if ext := filepath.Ext(path); ext == ".yaml" || ext == ".yml" || ext == ".json" {
				yamls++
			}
			files = append(files, file{name: name, mode: 0o644, data: data})
		default:
			return fmt.Errorf("%s: not a regular file or directory", path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("-catalog-dir: %w", err)
	}
	if yamls == 0 {
		return nil, fmt.Errorf("-catalog-dir %s holds no file-based catalog (.yaml or .json files)", catalogDir)
	}
	return files, nil
}

// catalogConfig is the image configuration of the catalog image.
func catalogConfig(labels map[string]string) v1.Config {
	labels[catalogConfigsLabel] = "/" + catalogConfigsDir
	return v1.Config{
		Entrypoint: []string{"/bin/opm"},
		Cmd:        []string{"serve", "/" + catalogConfigsDir},
		User:       "1001",
		WorkingDir: "/",
		Labels:     labels,
	}
}
