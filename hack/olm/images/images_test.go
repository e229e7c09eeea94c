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
)

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

// A file-based catalog becomes an image that serves it with opm under /configs/<package>/, with
// the grpc_health_probe OLM probes its pod with.
func TestCatalogImage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "catalog.yaml")
	fbc := "schema: olm.package\nname: enhanced-liveness-operator\ndefaultChannel: stable\n---\n" +
		"schema: olm.channel\npackage: enhanced-liveness-operator\nname: stable\nentries:\n- name: enhanced-liveness-operator.v0.1.0\n"
	if err := os.WriteFile(file, []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := catalogImage(file, []byte("opm"), []byte("probe"))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(append(cf.Config.Entrypoint, cf.Config.Cmd...), " "); got != "/bin/opm serve /configs" {
		t.Errorf("command %q", got)
	}
	if cf.Config.Labels["operators.operatorframework.io.index.configs.v1"] != "/configs" {
		t.Errorf("labels %v", cf.Config.Labels)
	}
	files := map[string]string{}
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = string(b)
	}
	for name, want := range map[string]string{"bin/opm": "opm", "bin/grpc_health_probe": "probe",
		"configs/enhanced-liveness-operator/catalog.yaml": fbc} {
		if files[name] != want {
			t.Errorf("%s = %q, want %q", name, files[name], want)
		}
	}
}

func TestCatalogPackage(t *testing.T) {
	for _, tc := range []struct{ name, fbc, want, err string }{
		{"one package", "schema: olm.package\nname: a\n---\nschema: olm.bundle\nname: a.v1\npackage: a\n", "a", ""},
		{"no package", "schema: olm.bundle\nname: a.v1\n", "", "no olm.package"},
		{"two packages", "schema: olm.package\nname: a\n---\nschema: olm.package\nname: b\n", "", "more than one olm.package (a, b)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := catalogPackage([]byte(tc.fbc))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
