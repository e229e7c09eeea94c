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
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// indexConfigsLabel names, on an opm image, the directory (configsDir) of the file-based catalog
// it serves.
const (
	indexConfigsLabel = "operators.operatorframework.io.index.configs.v1"
	configsDir        = "/configs"
)

// catalogImage is the catalog image of a CatalogSource (spec.image), what `opm generate
// dockerfile` builds FROM the opm image: the file-based catalog at /configs/<package>/catalog.yaml,
// /bin/opm serving it on :50051, and /bin/grpc_health_probe, which OLM runs as the registry pod's
// probes. Unlike that Dockerfile it carries no pre-built serve cache (building one runs opm), so
// opm serves without --cache-dir: it builds its cache in a temporary directory at start, which
// --cache-dir would refuse as a failed integrity check. The catalog must name its package (an
// olm.package entry); opm validates the rest when it serves.
func catalogImage(catalogFile string, opm, healthProbe []byte) (v1.Image, error) {
	raw, err := os.ReadFile(catalogFile)
	if err != nil {
		return nil, err
	}
	pkg, err := catalogPackage(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", catalogFile, err)
	}
	l := newLayer()
	l.dir("tmp", 0o1777)
	l.file("bin/opm", 0o755, opm)
	l.file("bin/grpc_health_probe", 0o755, healthProbe)
	l.file(configsDir[1:]+"/"+pkg+"/catalog.yaml", 0o644, raw)
	return l.image(v1.Config{
		Entrypoint: []string{"/bin/opm"},
		Cmd:        []string{"serve", configsDir},
		User:       "1001",
		Labels:     map[string]string{indexConfigsLabel: configsDir},
	})
}

// catalogPackage is the name of the olm.package entry of a file-based catalog (a YAML stream).
func catalogPackage(raw []byte) (string, error) {
	var pkg string
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		var e struct {
			Schema string `json:"schema"`
			Name   string `json:"name"`
		}
		if err := yaml.Unmarshal(doc, &e); err != nil {
			return "", err
		}
		if e.Schema != "olm.package" {
			continue
		}
		if pkg != "" {
			return "", fmt.Errorf("more than one olm.package (%s, %s): one package per catalog file", pkg, e.Name)
		}
		pkg = e.Name
	}
	if pkg == "" {
		return "", fmt.Errorf("no olm.package entry with a name")
	}
	return pkg, nil
}

func catalogCmd(args []string) error {
	fs := flag.NewFlagSet("catalog", flag.ContinueOnError)
	file := fs.String("file", "", "a file-based catalog of one package (make release: dist/catalog.yaml)")
	bin := fs.String("bin", "", "directory with opm and grpc_health_probe (hack/build-olm.sh)")
	ref := fs.String("ref", "", "where to push")
	ca := fs.String("ca", "", "CA of the registry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required(fs, "file", "bin", "ref", "ca"); err != nil {
		return err
	}
	tr, err := transport(*ca)
	if err != nil {
		return err
	}
	opm, err := readExecutable(filepath.Join(*bin, "opm"))
	if err != nil {
		return err
	}
	probe, err := readExecutable(filepath.Join(*bin, "grpc_health_probe"))
	if err != nil {
		return err
	}
	img, err := catalogImage(*file, opm, probe)
	if err != nil {
		return err
	}
	return push(img, *ref, tr)
}
