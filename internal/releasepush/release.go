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

// Package releasepush publishes a release directory (what `make release` writes) to the
// registry it was built for: the OCI archives of its images, each under the reference and with
// the digest images.txt records (the manifests, the chart and the catalog pin those digests), and
// its Helm chart as an OCI artifact. It needs nothing but the directory: every file is checked
// against SHA256SUMS before anything is pushed.
package releasepush

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Files of a release directory the push reads.
const (
	SumsFile   = "SHA256SUMS"
	ImagesFile = "images.txt"
	// ChartsPath is the repository path, under the release's registry, of its Helm charts:
	// <registry>/charts/<chart name>:<chart version>.
	ChartsPath = "charts"
)

// Image is one line of images.txt: an image of the release, the reference it is published
// under (repository and tag), the digest it has there, and the OCI archive holding it.
type Image struct {
	Tag    name.Tag
	Digest v1.Hash
	File   string
}

// Release is a release directory, checked.
type Release struct {
	Dir string
	// Registry is where every image of the release is published: what its references share
	// before their last path element (registry host, and a path when there is one).
	Registry string
	Images   []Image
	// Charts are the Helm chart packages (.tgz) of the directory.
	Charts []string
}

// Load reads and checks the release in dir: every file SHA256SUMS lists has that checksum,
// images.txt and every file it names are among them, and every image is published under the
// same registry. insecure allows plain-HTTP registries (name.Insecure).
func Load(dir string, insecure bool) (*Release, error) {
	files, err := checkSums(dir)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(files, ImagesFile) {
		return nil, fmt.Errorf("%s does not list %s", filepath.Join(dir, SumsFile), ImagesFile)
	}
	r := &Release{Dir: dir}
	if r.Images, err = readImages(filepath.Join(dir, ImagesFile), insecure); err != nil {
		return nil, err
	}
	for _, im := range r.Images {
		if !slices.Contains(files, im.File) {
			return nil, fmt.Errorf("%s names %s, which %s does not list", filepath.Join(dir, ImagesFile), im.File, SumsFile)
		}
		reg := path.Dir(im.Tag.Context().Name())
		if r.Registry == "" {
			r.Registry = reg
		} else if reg != r.Registry {
			return nil, fmt.Errorf("%s: %s is not under %s like the images before it: a release is built for one registry",
				filepath.Join(dir, ImagesFile), im.Tag, r.Registry)
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".tgz") {
			r.Charts = append(r.Charts, f)
		}
	}
	return r, nil
}

// CheckRegistry refuses a registry other than the one the release was built for: its
// install.yaml, chart and catalog name that registry's references, pinned by digest, so pushing
// elsewhere would publish a release nothing installs from.
func (r *Release) CheckRegistry(registry string, insecure bool) error {
	if registry == "" {
		return nil
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	probe := strings.TrimSuffix(registry, "/") + "/probe"
	repo, err := name.NewRepository(probe, opts...)
	if err != nil {
		return fmt.Errorf("--registry %q: not a registry (host[:port][/path]): %w", registry, err)
	}
	if got := path.Dir(repo.Name()); got != r.Registry {
		return fmt.Errorf("--registry %q is not the registry this release was built for, %s (%s): its install.yaml, "+
			"chart and catalog pin %s's references by digest; build the release for yours: make release REGISTRY=%s",
			registry, r.Registry, filepath.Join(r.Dir, ImagesFile), r.Registry, registry)
	}
	return nil
}

// checkSums verifies every file SHA256SUMS lists and returns their names.
func checkSums(dir string) ([]string, error) {
	sumsPath := filepath.Join(dir, SumsFile)
	f, err := os.Open(sumsPath)
	if err != nil {
		return nil, fmt.Errorf("%s is not a release directory (make release writes %s): %w", dir, SumsFile, err)
	}
	defer func() { _ = f.Close() }()
	var files []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			sum, file, ok = strings.Cut(sc.Text(), " *")
		}
		if !ok || len(sum) != sha256.Size*2 || file == "" || strings.ContainsAny(file, "/\\") {
			return nil, fmt.Errorf("%s line %d: want \"<sha256>  <file>\", got %q", sumsPath, n, sc.Text())
		}
		got, err := fileSHA256(filepath.Join(dir, file))
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", sumsPath, n, err)
		}
		if got != strings.ToLower(sum) {
			return nil, fmt.Errorf("%s: SHA-256 %s, %s records %s: the file changed since the release was made",
				filepath.Join(dir, file), got, SumsFile, sum)
		}
		files = append(files, file)
	}
	return files, sc.Err()
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readImages parses images.txt: one "<repository>:<tag>@sha256:<hex> <file>" a line.
func readImages(p string, insecure bool) ([]Image, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	var out []Image
	for n, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		fields := strings.Fields(line)
		bad := func(why string) error {
			return fmt.Errorf("%s line %d: %s; want \"<repository>:<tag>@sha256:<hex> <file>\", got %q", p, n+1, why, line)
		}
		if len(fields) != 2 {
			return nil, bad("two fields")
		}
		ref, digest, ok := strings.Cut(fields[0], "@")
		if !ok {
			return nil, bad("no digest")
		}
		tag, err := name.NewTag(ref, append(opts, name.StrictValidation)...)
		if err != nil {
			return nil, bad(err.Error())
		}
		h, err := v1.NewHash(digest)
		if err != nil {
			return nil, bad(err.Error())
		}
		if strings.ContainsAny(fields[1], "/\\") {
			return nil, bad("a file of the release directory")
		}
		out = append(out, Image{Tag: tag, Digest: h, File: fields[1]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no image", p)
	}
	return out, nil
}
