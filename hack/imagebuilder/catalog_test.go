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
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// catalogFixture writes a file-based catalog directory and, per platform, stand-ins for opm and
// grpc_health_probe that say which platform they are for.
func catalogFixture(t *testing.T, platforms ...string) (catalogDir, toolsDir string) {
	t.Helper()
	root := t.TempDir()
	catalogDir, toolsDir = filepath.Join(root, "catalog"), filepath.Join(root, "tools")
	write := func(path, data string, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(catalogDir, "pkg", "catalog.yaml"), "schema: olm.package\nname: pkg\n", 0o644)
	for _, p := range platforms {
		for _, tool := range catalogTools {
			write(filepath.Join(toolsDir, strings.ReplaceAll(p, "/", "-"), tool), tool+" for "+p, 0o755)
		}
	}
	return catalogDir, toolsDir
}

// The catalog image: per platform, the catalog under /configs and that platform's opm and
// grpc_health_probe, opm serving /configs as its command; the same inputs give the same digest.
func TestCatalogImageIndex(t *testing.T) {
	ps, err := parsePlatforms("linux/amd64,linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	catalogDir, toolsDir := catalogFixture(t, "linux/amd64", "linux/arm64")
	o := options{tag: "v0.1.0", format: "oci", catalogDir: catalogDir, catalogTools: toolsDir, platforms: ps,
		build: buildID{version: "0.1.0", revision: "0123456789ab", created: time.Unix(1764000000, 0).UTC()}}
	digest := func(out string) string {
		o.out = out
		path, err := write(o, images["catalog"], "registry.example/elo/enhanced-liveness-operator-catalog:v0.1.0")
		if err != nil {
			t.Fatal(err)
		}
		l, err := layout.ImageIndexFromPath(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := l.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		idx, err := l.ImageIndex(m.Manifests[0].Digest)
		if err != nil {
			t.Fatal(err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []string{"linux/amd64", "linux/arm64"} {
			img, err := idx.Image(im.Manifests[i].Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(append(cf.Config.Entrypoint, cf.Config.Cmd...), " "); got != "/bin/opm serve /configs" {
				t.Errorf("%s: runs %q, want /bin/opm serve /configs", want, got)
			}
			if got := cf.Config.Labels[catalogConfigsLabel]; got != "/configs" {
				t.Errorf("%s: label %s = %q, want /configs", want, catalogConfigsLabel, got)
			}
			layers, err := img.Layers()
			if err != nil {
				t.Fatal(err)
			}
			rc, err := layers[0].Uncompressed()
			if err != nil {
				t.Fatal(err)
			}
			contents := map[string]string{}
			tr := tar.NewReader(rc)
			for {
				h, err := tr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(tr)
				contents[h.Name] = string(b)
			}
			_ = rc.Close()
			for name, data := range map[string]string{
				"configs/pkg/catalog.yaml": "schema: olm.package\nname: pkg\n",
				"bin/opm":                  "opm for " + want,
				"bin/grpc_health_probe":    "grpc_health_probe for " + want,
			} {
				if contents[name] != data {
					t.Errorf("%s: %s holds %q, want %q", want, name, contents[name], data)
				}
			}
			if _, ok := contents["tmp/"]; !ok {
				t.Errorf("%s: no /tmp (opm builds its serve cache there): %v", want, slices.Sorted(maps.Keys(contents)))
			}
		}
		return m.Manifests[0].Digest.String()
	}
	if a, b := digest(filepath.Join(t.TempDir(), "a")), digest(filepath.Join(t.TempDir(), "b")); a != b {
		t.Errorf("two builds of the same catalog: digests %s and %s", a, b)
	}
}

// A platform without its tools is refused, naming the flag and the missing file.
func TestCatalogImageNeedsEachPlatformsTools(t *testing.T) {
	catalogDir, toolsDir := catalogFixture(t, "linux/amd64")
	p := platform{"linux", "arm64"}
	_, err := catalogFiles(catalogDir, toolsDir, p)
	if err == nil || !strings.Contains(err.Error(), "-catalog-tools") || !strings.Contains(err.Error(), filepath.Join("linux-arm64", "opm")) {
		t.Fatalf("err = %v, want one naming -catalog-tools and linux-arm64/opm", err)
	}
	if _, err := catalogFiles(t.TempDir(), toolsDir, platform{"linux", "amd64"}); err == nil ||
		!strings.Contains(err.Error(), "-catalog-dir") {
		t.Fatalf("an empty catalog directory: err = %v, want one naming -catalog-dir", err)
	}
}
