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
	"io"
	"maps"
	"path"
	"runtime"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// layer is the one layer of an image: files, symlinks and directories (parents are added),
// written in path order with a fixed time so equal content gives equal digests.
type layer struct {
	entries map[string]*tar.Header
	data    map[string][]byte
}

var epoch = time.Unix(0, 0)

func newLayer() *layer {
	return &layer{entries: map[string]*tar.Header{}, data: map[string][]byte{}}
}

func (l *layer) parents(p string) {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if _, ok := l.entries[d+"/"]; !ok {
			l.entries[d+"/"] = &tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}
		}
	}
}

func (l *layer) dir(p string, mode int64) {
	l.parents(p)
	l.entries[p+"/"] = &tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: mode, ModTime: epoch}
}

func (l *layer) file(p string, mode int64, data []byte) {
	l.parents(p)
	l.entries[p] = &tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data)), ModTime: epoch}
	l.data[p] = data
}

func (l *layer) symlink(p, target string) {
	l.parents(p)
	l.entries[p] = &tar.Header{Typeflag: tar.TypeSymlink, Name: p, Linkname: target, Mode: 0o777, ModTime: epoch}
}

func (l *layer) tar() ([]byte, error) {
	names := slices.Sorted(maps.Keys(l.entries))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		if err := tw.WriteHeader(l.entries[n]); err != nil {
			return nil, err
		}
		if d, ok := l.data[n]; ok {
			if _, err := tw.Write(d); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// image puts the layer on an empty base with cfg (PATH is added to its environment).
func (l *layer) image(cfg v1.Config) (v1.Image, error) {
	b, err := l.tar()
	if err != nil {
		return nil, err
	}
	lay, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, lay)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Created = v1.Time{Time: epoch}
	cfg.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, cfg.Env...)
	if cfg.WorkingDir == "" {
		cfg.WorkingDir = "/"
	}
	cf.Config = cfg
	return mutate.ConfigFile(img, cf)
}
