// Command imagebuilder builds the images the local cluster needs, without a Docker engine or a
// registry: it compiles static Go binaries and writes each image as a docker-archive tarball
// (what `docker save` writes) that `ctr -n k8s.io images import` loads into containerd.
//
//	pause     the sandbox image: /pause                                  (hack/local-cluster/pause)
//	operator  the Dockerfile's content: /manager and /daemon, user 65532 (cmd, cmd/daemon)
//	app       the e2e test application: /app                             (test/e2e/app)
//
// usage: go run ./hack/imagebuilder -out bin/images [-tag e2e] [-registry localhost] [-arch amd64] [pause operator app]
//
// `make image-push` and `make sample-image-push` push the operator and app tarballs to a registry
// (crane); the name written into a tarball matters only to `ctr images import`.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// image describes one image: the Go packages compiled into it (path in the image -> package),
// its entrypoint and user.
type image struct {
	repo       string
	binaries   map[string]string
	entrypoint []string
	user       string
}

var images = map[string]image{
	"pause": {
		repo:       "pause",
		binaries:   map[string]string{"/pause": "./hack/local-cluster/pause"},
		entrypoint: []string{"/pause"},
	},
	"operator": {
		repo:       "enhanced-liveness-operator",
		binaries:   map[string]string{"/manager": "./cmd", "/daemon": "./cmd/daemon"},
		entrypoint: []string{"/manager"},
		user:       "65532:65532",
	},
	"app": {
		repo:       "e2e-app",
		binaries:   map[string]string{"/app": "./test/e2e/app"},
		entrypoint: []string{"/app"},
	},
}

func main() {
	out := flag.String("out", "bin/images", "directory for the tarballs")
	tag := flag.String("tag", "e2e", "image tag")
	registry := flag.String("registry", "localhost", "registry part of the image names")
	arch := flag.String("arch", runtime.GOARCH, "architecture of the images (GOARCH of the binaries)")
	flag.Parse()
	known := slices.Sorted(maps.Keys(images))
	names := flag.Args()
	if len(names) == 0 {
		names = known
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	for _, n := range names {
		img, ok := images[n]
		if !ok {
			fail(fmt.Errorf("unknown image %q (%s)", n, strings.Join(known, ", ")))
		}
		ref := fmt.Sprintf("%s/%s:%s", *registry, img.repo, *tag)
		path := filepath.Join(*out, n+".tar")
		start := time.Now()
		if err := build(img, ref, path, *arch); err != nil {
			fail(fmt.Errorf("%s: %w", n, err))
		}
		fmt.Printf("imagebuilder: %s -> %s (%s)\n", ref, path, time.Since(start).Round(time.Millisecond))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "imagebuilder:", err)
	os.Exit(1)
}

func build(img image, ref, path, arch string) error {
	tmp, err := os.MkdirTemp("", "imagebuilder-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	files := map[string][]byte{}
	for _, dst := range slices.Sorted(maps.Keys(img.binaries)) {
		pkg := img.binaries[dst]
		bin := filepath.Join(tmp, filepath.Base(dst))
		env := []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + arch}
		if err := goBuild(context.Background(), os.Stdout, ref+" "+dst, pkg, bin, env); err != nil {
			return err
		}
		if files[dst], err = os.ReadFile(bin); err != nil {
			return err
		}
	}
	layerTar, err := layer(files)
	if err != nil {
		return err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return err
	}
	v1img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return err
	}
	cfg, err := v1img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Created = v1.Time{Time: time.Now().UTC()}
	cfg.Config = v1.Config{
		Entrypoint: img.entrypoint,
		User:       img.user,
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
	}
	if v1img, err = mutate.ConfigFile(v1img, cfg); err != nil {
		return err
	}
	tagRef, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	tmpPath := path + ".tmp"
	if err := tarball.WriteToFile(tmpPath, tagRef, v1img); err != nil {
		return err
	}
	return os.Rename(tmpPath, path)
}

// layer writes the one layer of an image: the binaries, the minimal /etc/passwd and /etc/group
// of a distroless "nonroot" base (root and 65532), and a world-writable /tmp.
func layer(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mod := time.Unix(0, 0)
	dirs := []struct {
		name string
		mode int64
	}{{"etc/", 0o755}, {"tmp/", 0o1777}}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d.name, Mode: d.mode, ModTime: mod}); err != nil {
			return nil, err
		}
	}
	add := func(path string, mode int64, data []byte) error {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: path, Mode: mode, Size: int64(len(data)), ModTime: mod}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	if err := add("etc/passwd", 0o644, []byte(passwd)); err != nil {
		return nil, err
	}
	if err := add("etc/group", 0o644, []byte("root:x:0:\nnonroot:x:65532:\n")); err != nil {
		return nil, err
	}
	for dst, data := range files {
		if err := add(dst[1:], 0o755, data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
