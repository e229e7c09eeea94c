package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// write builds img for every platform of o and writes it in o's format under o.out; it returns
// the path written.
func write(o options, img image, ref string) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return "", err
	}
	if o.format == "docker" {
		path := filepath.Join(o.out, filenameOf(img)+".tar")
		v1img, err := buildImage(o, img, ref, o.platforms[0])
		if err != nil {
			return "", err
		}
		tmp := path + ".tmp"
		if err := tarball.WriteToFile(tmp, tag, v1img); err != nil {
			return "", err
		}
		return path, os.Rename(tmp, path)
	}
	idx, err := buildIndex(o, img, ref)
	if err != nil {
		return "", err
	}
	digest, err := idx.Digest()
	if err != nil {
		return "", err
	}
	// NAME.digest: what a catalog pins the image by (make release), the digest crane push prints.
	if err := os.WriteFile(filepath.Join(o.out, filenameOf(img)+".digest"), []byte(digest.String()+"\n"), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(o.out, filenameOf(img))
	if o.format == "oci-archive" {
		path += ".oci.tar"
		return path, writeArchive(path, idx, tag, o.build.created)
	}
	return path, writeLayout(path, idx, tag)
}

// filenameOf is the image's name in the output directory: the name it is asked for by.
func filenameOf(img image) string {
	for n, i := range images {
		if i.repo == img.repo {
			return n
		}
	}
	return img.repo
}

// buildIndex builds img for each platform into one OCI image index.
func buildIndex(o options, img image, ref string) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range o.platforms {
		v1img, err := buildImage(o, img, ref, p)
		if err != nil {
			return nil, err
		}
		v1img = mutate.MediaType(mutate.ConfigMediaType(v1img, types.OCIConfigJSON), types.OCIManifestSchema1)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        v1img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.os, Architecture: p.arch}},
		})
	}
	return idx, nil
}

// writeArchive writes the OCI layout of writeLayout as one tar file (what podman and skopeo call
// an oci-archive; `tar -x` gives the layout crane pushes), its entries sorted and stamped with
// created, so that the same images give the same file.
func writeArchive(path string, idx v1.ImageIndex, tag name.Tag, created time.Time) error {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".layout-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	layoutDir := filepath.Join(dir, "layout")
	if err := writeLayout(layoutDir, idx, tag); err != nil {
		return err
	}
	var files []file
	err = filepath.WalkDir(layoutDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == layoutDir {
			return err
		}
		rel, err := filepath.Rel(layoutDir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			files = append(files, file{name: filepath.ToSlash(rel), mode: 0o755, dir: true})
			return nil
		}
		data, err := os.ReadFile(p)
		files = append(files, file{name: filepath.ToSlash(rel), mode: 0o644, data: data})
		return err
	})
	if err != nil {
		return err
	}
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if err := writeTar(f, files, created); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// writeLayout writes an OCI image layout at path whose index.json names one entry, the image
// index, annotated with its tag (OCI) and full name (containerd's import reads it). A layout
// already at path is replaced.
func writeLayout(path string, idx v1.ImageIndex, tag name.Tag) error {
	tmp := path + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	l, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	err = l.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag.TagStr(),
		"io.containerd.image.name":          tag.Name(),
	}))
	if err != nil {
		return err
	}
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
