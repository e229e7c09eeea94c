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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// cdx is the part of a CycloneDX document the test reads.
type cdx struct {
	BOMFormat    string `json:"bomFormat"`
	SerialNumber string `json:"serialNumber"`
	Metadata     struct {
		Timestamp string `json:"timestamp"`
		Component struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			PURL    string `json:"purl"`
		} `json:"component"`
	} `json:"metadata"`
	Components []struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"components"`
}

// The operator image as make release builds it (hack/imagebuilder, an OCI archive) gives one SBOM
// per binary, listing the module's main dependencies at the versions of go.mod, and the same
// bytes when generated again.
func TestOperatorImageSBOMs(t *testing.T) {
	root := repoRoot(t)
	tool := cyclonedxGomod(t, root)
	images := t.TempDir()
	const version = "0.0.0-sbomtest"
	goRun(t, root, "run", "./hack/imagebuilder", "-out", images, "-format", "oci-archive",
		"-platforms", "linux/"+runtime.GOARCH, "-version", version, "operator")
	archive := filepath.Join(images, "operator.oci.tar")

	want := map[string]string{} // module -> the version go.mod selects
	for _, m := range []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", "k8s.io/apimachinery"} {
		want[m] = strings.TrimSpace(goRun(t, root, "list", "-m", "-f", "{{.Version}}", m))
	}

	var first [][]byte
	for pass := range 2 {
		out := t.TempDir()
		files, err := run(options{tool: tool, archive: archive, version: version, prefix: "elo-v" + version, out: out})
		if err != nil {
			t.Fatal(err)
		}
		wantFiles := []string{
			"elo-v" + version + "-daemon-linux-" + runtime.GOARCH + ".cdx.json",
			"elo-v" + version + "-manager-linux-" + runtime.GOARCH + ".cdx.json",
		}
		if !slices.Equal(files, wantFiles) {
			t.Fatalf("files = %v, want %v", files, wantFiles)
		}
		for i, f := range files {
			b, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			if pass == 0 {
				checkSBOM(t, f, b, "v"+version, want)
				first = append(first, b)
			} else if !bytes.Equal(b, first[i]) {
				t.Errorf("%s differs between two runs on the same image: the SBOM is not reproducible", f)
			}
		}
	}
}

func checkSBOM(t *testing.T, file string, b []byte, version string, want map[string]string) {
	t.Helper()
	var doc cdx
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if doc.BOMFormat != "CycloneDX" {
		t.Errorf("%s: bomFormat = %q", file, doc.BOMFormat)
	}
	if doc.SerialNumber != "" || doc.Metadata.Timestamp != "" {
		t.Errorf("%s: serialNumber %q, timestamp %q: both change on every run", file, doc.SerialNumber, doc.Metadata.Timestamp)
	}
	// The main component is this module at the release's version, its package the binary's.
	mainPkg := map[bool]string{true: "#cmd/daemon", false: "#cmd"}[strings.Contains(file, "-daemon-")]
	if c := doc.Metadata.Component; c.Name != "github.com/enhanced-liveness/enhanced-liveness-operator" ||
		c.Version != version || !strings.HasSuffix(c.PURL, mainPkg) {
		t.Errorf("%s: main component %s@%s (%s), want this module at %s, package %s", file, c.Name, c.Version, c.PURL, version, mainPkg)
	}
	got := map[string]string{}
	for _, c := range doc.Components {
		got[c.Name] = c.Version
	}
	for m, v := range want {
		if got[m] != v {
			t.Errorf("%s: component %s at %q, want %q (go.mod)", file, m, got[m], v)
		}
	}
}

// cyclonedxGomod is $CYCLONEDX_GOMOD (make passes bin/'s), else the tool built from the wrapper
// module hack/sbom-build, at the version its go.mod pins.
func cyclonedxGomod(t *testing.T, root string) string {
	if p := os.Getenv("CYCLONEDX_GOMOD"); p != "" {
		return p
	}
	p := filepath.Join(t.TempDir(), "cyclonedx-gomod")
	goRun(t, filepath.Join(root, "hack", "sbom-build"), "build", "-trimpath", "-o", p,
		"github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod")
	return p
}

func goRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}
