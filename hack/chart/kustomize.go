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
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// kustomizeBuild runs `kustomize build dir` and returns its objects in order.
func kustomizeBuild(kustomize, dir string) ([]map[string]any, error) {
	out, err := run(kustomize, "build", dir)
	if err != nil {
		return nil, err
	}
	return parseObjects(out)
}

// kustomizeOverlay builds dir as config/default would include it: in the install namespace,
// with its name prefix (config/default lists config/network-policy commented out).
func kustomizeOverlay(kustomize, dir string) ([]map[string]any, error) {
	tmp, err := os.MkdirTemp("", "chart-overlay-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(tmp, abs)
	if err != nil {
		return nil, err
	}
	k := fmt.Sprintf("namespace: %s\nnamePrefix: %s\nresources:\n- %s\n", installNamespace, namePrefix, rel)
	if err := os.WriteFile(filepath.Join(tmp, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		return nil, err
	}
	return kustomizeBuild(kustomize, tmp)
}

// parseObjects reads a stream of YAML documents; empty documents are skipped.
func parseObjects(b []byte) ([]map[string]any, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var objs []map[string]any
	for {
		var o map[string]any
		if err := d.Decode(&o); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(o) > 0 {
			objs = append(objs, o)
		}
	}
}

// run runs a command and returns its standard output; its standard error is in the error.
func run(name string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w\n%s", name, args, err, stderr.String())
	}
	return out, nil
}
