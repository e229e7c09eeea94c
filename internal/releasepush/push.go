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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"
)

// Media types of a Helm chart stored in an OCI registry, as Helm writes and reads them.
const (
	HelmConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	HelmChartMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// PushImage pushes the image index of im's OCI archive under im's tag, after checking that the
// archive holds the digest images.txt records (the release pins it) and that the registry then
// serves that digest.
func (r *Release) PushImage(ctx context.Context, im Image, opts ...remote.Option) error {
	archive := filepath.Join(r.Dir, im.File)
	dir, err := os.MkdirTemp("", "release-push-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := untar(archive, dir); err != nil {
		return fmt.Errorf("%s: %w", archive, err)
	}
	idx, err := layoutIndex(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", archive, err)
	}
	got, err := idx.Digest()
	if err != nil {
		return fmt.Errorf("%s: %w", archive, err)
	}
	if got != im.Digest {
		return fmt.Errorf("%s holds the image index %s, %s records %s for %s", archive, got, ImagesFile, im.Digest, im.Tag)
	}
	if err := remote.WriteIndex(im.Tag, idx, append(opts, remote.WithContext(ctx))...); err != nil {
		return fmt.Errorf("push %s (%s): %w", im.Tag, im.File, err)
	}
	return expectDigest(ctx, im.Tag, im.Digest, opts)
}

// layoutIndex is the one image index an OCI layout's index.json names.
func layoutIndex(dir string) (v1.ImageIndex, error) {
	l, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("not an OCI image layout: %w", err)
	}
	m, err := l.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("index.json names %d manifests, want one image index", len(m.Manifests))
	}
	return l.ImageIndex(m.Manifests[0].Digest)
}

// untar extracts a tar file of regular files and directories into dir.
func untar(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		clean := path.Clean(h.Name)
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("entry %q leaves the archive's directory", h.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(clean))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.Create(target)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr) //nolint:gosec // the archive is checked against SHA256SUMS first
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q: not a regular file or directory", h.Name)
		}
	}
}

// ChartRef is where a chart is published: <registry>/charts/<name>:<version> (Helm's tag of a
// version: '+' becomes '_').
func (r *Release) ChartRef(chartName, version string, insecure bool) (name.Tag, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	return name.NewTag(fmt.Sprintf("%s/%s/%s:%s", r.Registry, ChartsPath, chartName, strings.ReplaceAll(version, "+", "_")), opts...)
}

// PushChart pushes the chart package file as Helm stores a chart in an OCI registry (`helm push`:
// its Chart.yaml as the config, the package as the one layer), so that `helm install
// oci://<registry>/charts/<name> --version <version>` installs it. The manifest carries no
// creation time: the same package always gives the same digest. It returns the reference and
// the digest pushed.
func (r *Release) PushChart(ctx context.Context, file string, insecure bool, opts ...remote.Option) (name.Tag, v1.Hash, error) {
	p := filepath.Join(r.Dir, file)
	pkg, err := os.ReadFile(p)
	if err != nil {
		return name.Tag{}, v1.Hash{}, err
	}
	meta, err := chartMetadata(pkg)
	if err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("%s: %w", p, err)
	}
	tag, err := r.ChartRef(meta.Name, meta.Version, insecure)
	if err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("%s: chart %s %s: %w", p, meta.Name, meta.Version, err)
	}
	m, err := chartManifest(meta, pkg)
	if err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("%s: %w", p, err)
	}
	opts = append(opts, remote.WithContext(ctx))
	for _, l := range []v1.Layer{static.NewLayer(meta.config, HelmConfigMediaType), static.NewLayer(pkg, HelmChartMediaType)} {
		if err := remote.WriteLayer(tag.Repository, l, opts...); err != nil {
			return name.Tag{}, v1.Hash{}, fmt.Errorf("push %s (%s): %w", tag, file, err)
		}
	}
	if err := remote.Put(tag, m, opts...); err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("push %s (%s): %w", tag, file, err)
	}
	d, err := m.Digest()
	if err != nil {
		return name.Tag{}, v1.Hash{}, err
	}
	return tag, d, expectDigest(ctx, tag, d, opts)
}

// chartMeta is what a chart package says of itself: its Chart.yaml, and that file as JSON (the
// config of the chart's OCI manifest, which Helm reads as the chart's metadata).
type chartMeta struct {
	Name, Version, Description string
	config                     []byte
}

// chartMetadata reads <name>/Chart.yaml of a chart package.
func chartMetadata(pkg []byte) (chartMeta, error) {
	zr, err := gzip.NewReader(bytes.NewReader(pkg))
	if err != nil {
		return chartMeta{}, fmt.Errorf("not a Helm chart package (gzip): %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return chartMeta{}, errors.New("not a Helm chart package: no <chart>/Chart.yaml")
		}
		if err != nil {
			return chartMeta{}, fmt.Errorf("not a Helm chart package: %w", err)
		}
		if dir, base := path.Split(h.Name); base != "Chart.yaml" || strings.Count(dir, "/") != 1 {
			continue
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			return chartMeta{}, err
		}
		var m struct {
			Name        string `json:"name"`
			Version     string `json:"version"`
			Description string `json:"description"`
		}
		if err := yaml.Unmarshal(raw, &m); err != nil {
			return chartMeta{}, fmt.Errorf("%s: %w", h.Name, err)
		}
		if m.Name == "" || m.Version == "" {
			return chartMeta{}, fmt.Errorf("%s: no name or version", h.Name)
		}
		config, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return chartMeta{}, fmt.Errorf("%s: %w", h.Name, err)
		}
		return chartMeta{Name: m.Name, Version: m.Version, Description: m.Description, config: config}, nil
	}
}

// rawManifest is a manifest pushed as is (remote.Put).
type rawManifest struct{ b []byte }

func (m rawManifest) RawManifest() ([]byte, error)        { return m.b, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (m rawManifest) Digest() (v1.Hash, error) {
	h, _, err := v1.SHA256(bytes.NewReader(m.b))
	return h, err
}

// chartManifest is the OCI manifest of a chart: Helm's config and layer media types, and the
// annotations `helm push` writes but the creation time.
func chartManifest(meta chartMeta, pkg []byte) (rawManifest, error) {
	desc := func(b []byte, mt types.MediaType) (v1.Descriptor, error) {
		h, n, err := v1.SHA256(bytes.NewReader(b))
		return v1.Descriptor{MediaType: mt, Digest: h, Size: n}, err
	}
	cfg, err := desc(meta.config, HelmConfigMediaType)
	if err != nil {
		return rawManifest{}, err
	}
	layer, err := desc(pkg, HelmChartMediaType)
	if err != nil {
		return rawManifest{}, err
	}
	ann := map[string]string{
		"org.opencontainers.image.title":   meta.Name,
		"org.opencontainers.image.version": meta.Version,
	}
	if meta.Description != "" {
		ann["org.opencontainers.image.description"] = meta.Description
	}
	b, err := json.Marshal(v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Config: cfg,
		Layers: []v1.Descriptor{layer}, Annotations: ann})
	return rawManifest{b}, err
}

// expectDigest checks that the registry serves ref with digest want.
func expectDigest(ctx context.Context, ref name.Tag, want v1.Hash, opts []remote.Option) error {
	d, err := remote.Head(ref, append(opts, remote.WithContext(ctx))...)
	if err != nil {
		return fmt.Errorf("after the push, %s: %w", ref, err)
	}
	if d.Digest != want {
		return fmt.Errorf("after the push, %s has the digest %s, not %s", ref, d.Digest, want)
	}
	return nil
}
