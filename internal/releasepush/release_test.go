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

package releasepush

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// fixture is a release directory as make release writes it, for registry reg: one image
// archive, a chart package, images.txt and SHA256SUMS.
type fixture struct {
	dir, reg string
	digest   v1.Hash
	chart    []byte
}

const (
	imageFile = "op-v1.0.0.oci.tar"
	chartFile = "mychart-1.0.0.tgz"
)

func newFixture(t *testing.T, reg string) fixture {
	t.Helper()
	f := fixture{dir: t.TempDir(), reg: reg}
	idx, err := random.Index(64, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.digest, err = idx.Digest(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.dir, imageFile), layoutTar(t, idx))
	f.chart = chartPackage(t, "mychart", "apiVersion: v2\nname: mychart\nversion: 1.0.0\ndescription: A test chart.\n")
	writeFile(t, filepath.Join(f.dir, chartFile), f.chart)
	f.writeImages(t, fmt.Sprintf("%s/op:v1.0.0@%s %s\n", reg, f.digest, imageFile))
	return f
}

// writeImages writes images.txt and SHA256SUMS of every file of the directory.
func (f fixture) writeImages(t *testing.T, images string) {
	t.Helper()
	writeFile(t, filepath.Join(f.dir, ImagesFile), []byte(images))
	f.writeSums(t)
}

func (f fixture) writeSums(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	var sums strings.Builder
	for _, e := range entries {
		if e.Name() == SumsFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(f.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(s[:]), e.Name())
	}
	writeFile(t, filepath.Join(f.dir, SumsFile), []byte(sums.String()))
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// layoutTar is an OCI layout holding idx, as one tar (an OCI archive).
func layoutTar(t *testing.T, idx v1.ImageIndex) []byte {
	t.Helper()
	dir := t.TempDir()
	l, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AppendIndex(idx); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o755})
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: int64(len(b))}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// chartPackage is a chart package (.tgz) with chartYAML as <dir>/Chart.yaml.
func chartPackage(t *testing.T, dir, chartYAML string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for n, body := range map[string]string{dir + "/Chart.yaml": chartYAML, dir + "/values.yaml": "a: 1\n"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// serve starts an in-memory registry; it returns its host:port.
func serve(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(registry.New())
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// The release's image lands under its tag with the digest images.txt records, and its chart as
// Helm stores one: the chart's Chart.yaml as a config of Helm's config media type, the package
// as the one layer of Helm's chart media type, under <registry>/charts/<name>:<version>; pushing
// the same package twice gives the same digest.
func TestPushImageAndChart(t *testing.T) {
	host := serve(t)
	f := newFixture(t, host+"/team")
	r, err := Load(f.dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Registry != host+"/team" || !slices.Equal(r.Charts, []string{chartFile}) {
		t.Fatalf("Load: registry %q, charts %v; want %s/team, [%s]", r.Registry, r.Charts, host, chartFile)
	}
	ctx := context.Background()
	if err := r.PushImage(ctx, r.Images[0]); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host+"/team/op:v1.0.0", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d.Digest != f.digest || !d.MediaType.IsIndex() {
		t.Errorf("the registry serves %s as %s %s, want the image index %s", ref, d.MediaType, d.Digest, f.digest)
	}

	tag, digest, err := r.PushChart(ctx, chartFile, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := host + "/team/charts/mychart:1.0.0"; tag.String() != want {
		t.Errorf("chart pushed to %s, want %s", tag, want)
	}
	img, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.MediaType != HelmConfigMediaType || len(m.Layers) != 1 || m.Layers[0].MediaType != HelmChartMediaType {
		t.Fatalf("chart manifest: config %s, layers %+v; want Helm's media types", m.Config.MediaType, m.Layers)
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"apiVersion":"v2","description":"A test chart.","name":"mychart","version":"1.0.0"}`; string(cfg) != want {
		t.Errorf("chart config = %s, want %s", cfg, want)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	_, _ = got.ReadFrom(rc)
	_ = rc.Close()
	if !bytes.Equal(got.Bytes(), f.chart) {
		t.Error("the chart layer is not the package")
	}
	if m.Annotations["org.opencontainers.image.version"] != "1.0.0" || m.Annotations["org.opencontainers.image.title"] != "mychart" {
		t.Errorf("chart annotations %v, want title mychart and version 1.0.0", m.Annotations)
	}
	_, again, err := r.PushChart(ctx, chartFile, true)
	if err != nil {
		t.Fatal(err)
	}
	if again != digest {
		t.Errorf("the same chart pushed twice: digests %s and %s", digest, again)
	}
}

// A release directory that is not what make release wrote is refused before anything is pushed,
// naming the file and what is wrong.
func TestLoadRefuses(t *testing.T) {
	other := "sha256:" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		name   string
		change func(t *testing.T, f fixture)
		want   []string
	}{
		{"a file changed after SHA256SUMS", func(t *testing.T, f fixture) {
			writeFile(t, filepath.Join(f.dir, chartFile), []byte("changed"))
		}, []string{chartFile, "SHA256SUMS records"}},
		{"no SHA256SUMS", func(t *testing.T, f fixture) {
			_ = os.Remove(filepath.Join(f.dir, SumsFile))
		}, []string{"is not a release directory"}},
		{"an image archive SHA256SUMS does not list", func(t *testing.T, f fixture) {
			f.writeImages(t, fmt.Sprintf("%s/op:v1.0.0@%s %s\n", f.reg, f.digest, imageFile))
			writeFile(t, filepath.Join(f.dir, ImagesFile), []byte(fmt.Sprintf("%s/op:v1.0.0@%s other.oci.tar\n", f.reg, f.digest)))
			f.writeSums(t)
		}, []string{"names other.oci.tar", "does not list"}},
		{"a reference without a digest", func(t *testing.T, f fixture) {
			f.writeImages(t, fmt.Sprintf("%s/op:v1.0.0 %s\n", f.reg, imageFile))
		}, []string{"images.txt line 1: no digest"}},
		{"a reference without a tag", func(t *testing.T, f fixture) {
			f.writeImages(t, fmt.Sprintf("%s/op@%s %s\n", f.reg, f.digest, imageFile))
		}, []string{"images.txt line 1"}},
		{"images of two registries", func(t *testing.T, f fixture) {
			f.writeImages(t, fmt.Sprintf("%s/op:v1.0.0@%s %s\nother.example/op-bundle:v1.0.0@%s %s\n",
				f.reg, f.digest, imageFile, other, imageFile))
		}, []string{"other.example/op-bundle:v1.0.0", "one registry"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "registry.example/team")
			c.change(t, f)
			_, err := Load(f.dir, false)
			if err == nil {
				t.Fatal("Load accepted it")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

// An archive that does not hold the digest images.txt records is not pushed: the release's
// manifests pin that digest.
func TestPushImageRefusesAnotherDigest(t *testing.T) {
	host := serve(t)
	f := newFixture(t, host+"/team")
	other := "sha256:" + strings.Repeat("ab", 32)
	f.writeImages(t, fmt.Sprintf("%s/op:v1.0.0@%s %s\n", f.reg, other, imageFile))
	r, err := Load(f.dir, true)
	if err != nil {
		t.Fatal(err)
	}
	err = r.PushImage(context.Background(), r.Images[0])
	if err == nil || !strings.Contains(err.Error(), imageFile+" holds the image index "+f.digest.String()) ||
		!strings.Contains(err.Error(), "images.txt records "+other) {
		t.Fatalf("err = %v, want one naming the archive, its digest and the recorded one", err)
	}
	if _, err := remote.Head(r.Images[0].Tag); err == nil {
		t.Error("the image was pushed all the same")
	}
}

// --registry must be the registry the release was built for, however it is spelt.
func TestCheckRegistry(t *testing.T) {
	for _, c := range []struct {
		built, flag string
		ok          bool
	}{
		{"registry.example/team", "", true},
		{"registry.example/team", "registry.example/team", true},
		{"registry.example/team", "registry.example/team/", true},
		{"docker.io/team", "index.docker.io/team", true},
		{"registry.example/team", "registry.example/other", false},
		{"registry.example/team", "registry.example", false},
		{"registry.example/team", "Not A Registry", false},
	} {
		f := newFixture(t, c.built)
		r, err := Load(f.dir, false)
		if err != nil {
			t.Fatal(err)
		}
		err = r.CheckRegistry(c.flag, false)
		if (err == nil) != c.ok {
			t.Errorf("built for %s, --registry %q: err = %v, want ok %v", c.built, c.flag, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--registry") {
			t.Errorf("err = %v, want it to name --registry", err)
		}
	}
}
