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
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func fakeBinaries(t *testing.T, platforms ...string) string {
	dir := t.TempDir()
	for _, p := range platforms {
		name := Binary + "-" + strings.ReplaceAll(p, "/", "-")
		if strings.HasPrefix(p, "windows/") {
			name += ".exe"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("binary for "+p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The archives are what krew installs, the manifest names each with its SHA-256, and a second
// pack of the same binaries gives the same bytes.
func TestPack(t *testing.T) {
	bins := fakeBinaries(t, "linux/amd64", "windows/arm64")
	license := filepath.Join(t.TempDir(), "LICENSE")
	if err := os.WriteFile(license, []byte("Apache"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() (string, manifest) {
		out := t.TempDir()
		files, err := pack(options{version: "v0.2.0-rc.0", binDir: bins, license: license, out: out,
			urlBase: "https://example.invalid/v0.2.0-rc.0/", platforms: "linux/amd64,windows/arm64"})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 3 {
			t.Fatalf("wrote %v", files)
		}
		var m manifest
		b, err := os.ReadFile(filepath.Join(out, ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(b, &m); err != nil {
			t.Fatal(err)
		}
		return out, m
	}
	out, m := run()
	if m.Kind != "Plugin" || m.Metadata.Name != "enhancedliveness" || m.Spec.Version != "v0.2.0-rc.0" || len(m.Spec.Platforms) != 2 {
		t.Fatalf("manifest %+v", m)
	}
	for _, p := range m.Spec.Platforms {
		name := filepath.Base(p.URI)
		if p.URI != "https://example.invalid/v0.2.0-rc.0/"+name {
			t.Errorf("uri %s", p.URI)
		}
		archive, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(archive)
		if p.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: sha256 %s is not the archive's", name, p.SHA256)
		}
		wantBin := Binary
		if p.Selector.MatchLabels["os"] == "windows" {
			wantBin += ".exe"
		}
		if p.Bin != wantBin {
			t.Errorf("%s: bin %s, want %s", name, p.Bin, wantBin)
		}
		got := untar(t, archive)
		if got[wantBin] != "binary for "+p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"] || got["LICENSE"] != "Apache" || len(got) != 2 {
			t.Errorf("%s holds %v", name, got)
		}
	}
	again, _ := run()
	for _, f := range []string{"kubectl-enhancedliveness-linux-amd64.tar.gz", "kubectl-enhancedliveness-windows-arm64.tar.gz", ManifestFile} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, _ := os.ReadFile(filepath.Join(again, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two packs of the same binaries", f)
		}
	}
}

func TestPackRefusesBadInput(t *testing.T) {
	bins := fakeBinaries(t, "linux/amd64")
	for _, tc := range []struct {
		o    options
		want string
	}{
		{options{version: "0.2.0", binDir: bins, out: t.TempDir(), urlBase: "u", platforms: "linux/amd64"}, `-version: must be vMAJOR.MINOR.PATCH[-PRE], got "0.2.0"`},
		{options{version: "v0.2.0", binDir: bins, out: t.TempDir(), platforms: "linux/amd64"}, "-url-base: required"},
		{options{version: "v0.2.0", binDir: bins, out: t.TempDir(), urlBase: "u", platforms: "darwin/arm64", license: "../../LICENSE"}, "-bin-dir: the darwin/arm64 binary"},
		{options{version: "v0.2.0", binDir: bins, out: t.TempDir(), urlBase: "u", platforms: "linux", license: "../../LICENSE"}, `-platforms: "linux" is not os/arch`},
	} {
		_, err := pack(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func untar(t *testing.T, archive []byte) map[string]string {
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = string(b)
	}
}
