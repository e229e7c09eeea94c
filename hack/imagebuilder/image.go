package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// platform is one os/arch an image is built for.
type platform struct{ os, arch string }

func (p platform) String() string { return p.os + "/" + p.arch }

// goArches are the architectures the images are built for: those the project's nodes run on
// (docs/compatibility.md) and Go compiles static binaries for.
var goArches = []string{"amd64", "arm64", "arm", "ppc64le", "s390x", "riscv64"}

// parsePlatforms reads "linux/amd64,linux/arm64": linux only, each once.
func parsePlatforms(s string) ([]platform, error) {
	var ps []platform
	for item := range strings.SplitSeq(s, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(item), "/")
		if !ok || osName != "linux" || !slices.Contains(goArches, arch) {
			return nil, fmt.Errorf("%q: want linux/<arch>, arch one of %s", item, strings.Join(goArches, ", "))
		}
		p := platform{osName, arch}
		if slices.Contains(ps, p) {
			return nil, fmt.Errorf("%s is given twice", p)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func platformList(ps []platform) string {
	s := make([]string, 0, len(ps))
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, ",")
}

// buildImage builds img for one platform.
func buildImage(o options, img image, ref string, p platform) (v1.Image, error) {
	var files []file
	var labels map[string]string
	switch {
	case img.bundle:
		var err error
		if files, labels, err = bundleFiles(o.bundleDir); err != nil {
			return nil, err
		}
	case img.catalog:
		var err error
		if files, err = catalogFiles(o.catalogDir, o.catalogTools, p); err != nil {
			return nil, err
		}
	default:
		var err error
		if files, err = compile(img, ref, p, o.build.ldflags); err != nil {
			return nil, err
		}
		files = append(files, baseFiles()...)
	}
	layerTar, err := layer(files)
	if err != nil {
		return nil, err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	v1img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return nil, err
	}
	cfg, err := v1img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = p.os, p.arch
	cfg.Created = v1.Time{Time: o.build.created}
	cfg.Config = v1.Config{Labels: imageLabels(img, o.build, labels)}
	if img.catalog {
		cfg.Config = catalogConfig(cfg.Config.Labels)
	} else if !img.bundle {
		cfg.Config.Entrypoint = img.entrypoint
		cfg.Config.User = img.user
		cfg.Config.WorkingDir = "/"
		cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	return mutate.ConfigFile(v1img, cfg)
}

// imageLabels are the OCI labels every image carries (what it is, its version and source), and
// the bundle's own labels (metadata/annotations.yaml).
func imageLabels(img image, b buildID, extra map[string]string) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":    img.repo,
		"org.opencontainers.image.version":  b.version,
		"org.opencontainers.image.revision": b.revision,
		"org.opencontainers.image.source":   "https://github.com/enhanced-liveness/enhanced-liveness-operator",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	maps.Copy(l, extra)
	return l
}

// file is one regular file or directory of a layer.
type file struct {
	name string // relative to the image root, no leading slash
	mode int64
	dir  bool
	data []byte
}

// compile builds the image's binaries for p, static, stamped with ldflags.
func compile(img image, ref string, p platform, ldflags string) ([]file, error) {
	tmp, err := os.MkdirTemp("", "imagebuilder-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	var files []file
	for _, dst := range slices.Sorted(maps.Keys(img.binaries)) {
		pkg := img.binaries[dst]
		bin := filepath.Join(tmp, filepath.Base(dst))
		env := []string{"CGO_ENABLED=0", "GOOS=" + p.os, "GOARCH=" + p.arch}
		what := fmt.Sprintf("%s %s (%s)", ref, dst, p)
		if err := goBuild(context.Background(), os.Stdout, what, pkg, bin, ldflags, env); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		files = append(files, file{name: dst[1:], mode: 0o755, data: data})
	}
	return files, nil
}

// baseFiles are what a distroless "nonroot" base gives a static binary: /etc/passwd and
// /etc/group with root and 65532, and a world-writable /tmp.
func baseFiles() []file {
	return []file{
		{name: "etc", mode: 0o755, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
		{name: "etc/passwd", mode: 0o644,
			data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
	}
}

// layer writes one layer of files, sorted by name and with a fixed time, so that the same files
// always give the same layer digest.
func layer(files []file) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeTar(&buf, files, time.Unix(0, 0)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeTar writes files as a tar stream, sorted by name, owned by root, modified at mod.
func writeTar(w io.Writer, files []file, mod time.Time) error {
	tw := tar.NewWriter(w)
	sorted := slices.SortedFunc(slices.Values(files), func(a, b file) int { return strings.Compare(a.name, b.name) })
	for _, f := range sorted {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mod}
		if f.dir {
			hdr = &tar.Header{Typeflag: tar.TypeDir, Name: f.name + "/", Mode: f.mode, ModTime: mod}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}
