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
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"sigs.k8s.io/yaml"
)

// The committed bundle becomes an image with its files at the root and its annotations as labels.
func TestBundleImageOfTheCommittedBundle(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "bundle")
	img, err := bundleImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range meta.Annotations {
		if cf.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], v)
		}
	}
	files := map[string]bool{}
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = true
	}
	for _, want := range []string{"manifests/enhanced-liveness-operator.clusterserviceversion.yaml",
		"metadata/annotations.yaml", "tests/scorecard/config.yaml"} {
		if !files[want] {
			t.Errorf("%s not in the image (%d entries)", want, len(files))
		}
	}
}

func TestBundleImageRejectsIncompleteMetadata(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	ann := "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n"
	if err := os.WriteFile(filepath.Join(dir, "metadata", "annotations.yaml"), []byte(ann), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := bundleImage(dir)
	if err == nil || !strings.Contains(err.Error(), "package.v1") {
		t.Fatalf("err = %v, want one naming the missing package annotation", err)
	}
}

// Equal content gives equal digests (fixed times, sorted entries), whatever the insertion order.
func TestLayerIsReproducible(t *testing.T) {
	build := func(order []string) string {
		l := newLayer()
		for _, n := range order {
			l.file("bin/"+n, 0o755, []byte(n))
		}
		l.symlink("bin/sh", "busybox")
		img, err := l.image(v1.Config{Entrypoint: []string{"/bin/sh"}})
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	if a, b := build([]string{"a", "b", "busybox"}), build([]string{"busybox", "b", "a"}); a != b {
		t.Fatalf("digests differ: %s, %s", a, b)
	}
}
