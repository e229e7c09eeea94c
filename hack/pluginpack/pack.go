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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Binary is the plugin's executable name; kubectl finds it on the PATH by this name.
const Binary = "kubectl-enhancedliveness"

// ManifestFile is the krew plugin manifest's file name: krew names a plugin after it.
const ManifestFile = "enhancedliveness.yaml"

// archiveTime is every archive entry's modification time, so that equal inputs give equal bytes.
var archiveTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

var semver = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

type options struct {
	version, binDir, license, out, urlBase, platforms string
}

func (o options) validate() error {
	var errs []error
	if !semver.MatchString(o.version) {
		errs = append(errs, fmt.Errorf("-version: must be vMAJOR.MINOR.PATCH[-PRE], got %q", o.version))
	}
	for name, v := range map[string]string{"-bin-dir": o.binDir, "-out": o.out, "-url-base": o.urlBase} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s: required", name))
		}
	}
	return errors.Join(errs...)
}

// pack writes an archive per platform and the manifest, and returns the files written.
func pack(o options) ([]string, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	license, err := os.ReadFile(o.license)
	if err != nil {
		return nil, fmt.Errorf("-license: %w", err)
	}
	m := newManifest(o.version)
	var written []string
	for p := range strings.SplitSeq(o.platforms, ",") {
		goos, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || goos == "" || arch == "" {
			return nil, fmt.Errorf("-platforms: %q is not os/arch", p)
		}
		suffix := ""
		if goos == "windows" {
			suffix = ".exe"
		}
		bin := Binary + suffix
		exe, err := os.ReadFile(filepath.Join(o.binDir, fmt.Sprintf("%s-%s-%s%s", Binary, goos, arch, suffix)))
		if err != nil {
			return nil, fmt.Errorf("-bin-dir: the %s binary: %w", p, err)
		}
		archive, err := tarGz([]entry{{bin, exe, 0o755}, {"LICENSE", license, 0o644}})
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("%s-%s-%s.tar.gz", Binary, goos, arch)
		if err := os.WriteFile(filepath.Join(o.out, name), archive, 0o644); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(archive)
		m.Spec.Platforms = append(m.Spec.Platforms, platform{
			Selector: selector{MatchLabels: map[string]string{"os": goos, "arch": arch}},
			URI:      strings.TrimSuffix(o.urlBase, "/") + "/" + name, SHA256: hex.EncodeToString(sum[:]), Bin: bin,
			Files: []file{{From: bin, To: "."}, {From: "LICENSE", To: "."}}})
		written = append(written, name)
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.out, ManifestFile), b, 0o644); err != nil {
		return nil, err
	}
	return append(written, ManifestFile), nil
}

type entry struct {
	name string
	data []byte
	mode int64
}

// tarGz is a gzip'd tar of entries with fixed times, owners and no gzip name: reproducible.
func tarGz(entries []entry) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.data)), ModTime: archiveTime, Typeflag: tar.TypeReg,
			Format: tar.FormatPAX, Uname: "root", Gname: "root"}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
