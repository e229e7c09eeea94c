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

// Command sbom writes a CycloneDX SBOM (JSON) of every Go binary of a multi-platform image, as
// `make release` writes it: the image is an OCI archive (hack/imagebuilder -format oci-archive),
// each binary of each platform's image is read from its layers, and cyclonedx-gomod's `bin` mode
// lists the modules the Go linker recorded in it (its build list: module, version, go.sum hash),
// with the release's version as the main component's.
//
// usage: go run ./hack/sbom -tool bin/cyclonedx-gomod -archive dist/NAME-vV.oci.tar -version V \
//
//	-prefix NAME-vV -out dist
//
// It writes OUT/PREFIX-BINARY-OS-ARCH.cdx.json (e.g. enhanced-liveness-operator-v0.2.0-manager-linux-amd64.cdx.json)
// and prints each file's name. The SBOMs carry no serial number and no timestamp, so that the
// same binaries always give the same files.
package main

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

type options struct {
	tool, archive, version, prefix, out string
}

func main() {
	var o options
	flag.StringVar(&o.tool, "tool", "cyclonedx-gomod", "the cyclonedx-gomod command")
	flag.StringVar(&o.archive, "archive", "", "the image: an OCI image layout in one tar, holding one image index")
	flag.StringVar(&o.version, "version", "", "the version of the binaries (semver, no leading v)")
	flag.StringVar(&o.prefix, "prefix", "", "the start of each file's name, e.g. enhanced-liveness-operator-v0.2.0")
	flag.StringVar(&o.out, "out", ".", "the directory to write the SBOMs into")
	flag.Parse()
	files, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
}

// run writes the SBOMs of o.archive and returns their names, sorted.
func run(o options) ([]string, error) {
	switch {
	case o.archive == "":
		return nil, errors.New("-archive: required, the image's OCI archive")
	case o.version == "" || strings.HasPrefix(o.version, "v"):
		return nil, fmt.Errorf("-version %q: required, semver without the leading v", o.version)
	case o.prefix == "":
		return nil, errors.New("-prefix: required, the start of each SBOM's file name")
	}
	tmp, err := os.MkdirTemp("", "sbom-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	dir := filepath.Join(tmp, "layout")
	if err := untar(o.archive, dir); err != nil {
		return nil, fmt.Errorf("%s: %w", o.archive, err)
	}
	images, err := platformImages(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.archive, err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for platform, img := range images {
		bins, err := goBinaries(img, filepath.Join(tmp, platform))
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", o.archive, platform, err)
		}
		if len(bins) == 0 {
			return nil, fmt.Errorf("%s (%s): the image holds no Go binary", o.archive, platform)
		}
		for _, bin := range bins {
			name := fmt.Sprintf("%s-%s-%s.cdx.json", o.prefix, filepath.Base(bin), platform)
			if err := generate(o.tool, bin, o.version, filepath.Join(o.out, name)); err != nil {
				return nil, err
			}
			written = append(written, name)
		}
	}
	slices.Sort(written)
	return written, nil
}

// generate runs cyclonedx-gomod on one binary. Without a serial number and a timestamp the SBOM
// is a function of the binary alone. The licenses are read from the module cache, which holds
// every module the binary was just built from: GOPROXY=off keeps the tool from asking the proxy
// for this module at the release's version, which is not published there.
func generate(tool, bin, version, out string) error {
	cmd := exec.Command(tool, "bin", "-json", "-licenses", "-noserial", "-notimestamp",
		"-version", "v"+version, "-output", out, bin)
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s bin %s: %w\n%s", tool, filepath.Base(bin), err, stderr.String())
	}
	return nil
}

// platformImages reads the image index of an OCI layout: one image per platform, keyed os-arch.
func platformImages(dir string) (map[string]v1.Image, error) {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	// The layout's index.json names the image index of the release.
	topManifest, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(topManifest.Manifests) != 1 {
		return nil, fmt.Errorf("want one image index in the layout, found %d entries", len(topManifest.Manifests))
	}
	idx, err := top.ImageIndex(topManifest.Manifests[0].Digest)
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	images := map[string]v1.Image{}
	for _, d := range m.Manifests {
		if d.Platform == nil {
			return nil, fmt.Errorf("manifest %s names no platform", d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		images[d.Platform.OS+"-"+d.Platform.Architecture] = img
	}
	return images, nil
}

// goBinaries writes every Go binary of img's file system into dir and returns their paths.
func goBinaries(img v1.Image, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	var bins []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return bins, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
			continue
		}
		p := filepath.Join(dir, strings.ReplaceAll(path.Clean("/" + h.Name)[1:], "/", "_"))
		if err := writeFile(p, tr); err != nil {
			return nil, err
		}
		if _, err := buildinfo.ReadFile(p); err != nil {
			continue // not a Go binary
		}
		bins = append(bins, p)
	}
}

// untar extracts the tar file archive into dir.
func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)[1:]
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(filepath.Join(dir, name), 0o755)
		case tar.TypeReg:
			err = writeFile(filepath.Join(dir, name), tr)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(p string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
