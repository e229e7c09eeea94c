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

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"
)

// bundleImage is what bundle.Dockerfile builds: FROM scratch, manifests/, metadata/ and
// tests/scorecard/ of dir at the image root, and the annotations of metadata/annotations.yaml as
// labels (OLM and opm read the media type, package and channels from them).
func bundleImage(dir string) (v1.Image, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(raw, &meta); err != nil {
		return nil, fmt.Errorf("bundle %s: metadata/annotations.yaml: %w", dir, err)
	}
	for _, k := range []string{"operators.operatorframework.io.bundle.mediatype.v1",
		"operators.operatorframework.io.bundle.package.v1", "operators.operatorframework.io.bundle.channels.v1"} {
		if meta.Annotations[k] == "" {
			return nil, fmt.Errorf("bundle %s: metadata/annotations.yaml has no %s", dir, k)
		}
	}
	l := newLayer()
	for _, sub := range []string{"manifests", "metadata", filepath.Join("tests", "scorecard")} {
		root := filepath.Join(dir, sub)
		if _, err := os.Stat(root); os.IsNotExist(err) && sub != "manifests" && sub != "metadata" {
			continue
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			switch {
			case d.IsDir():
				l.dir(rel, 0o755)
			case d.Type().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				l.file(rel, 0o644, b)
			default:
				return fmt.Errorf("%s: not a regular file or directory", p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", dir, err)
		}
	}
	return l.image(v1.Config{Labels: meta.Annotations})
}
