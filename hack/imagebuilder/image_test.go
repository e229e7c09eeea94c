package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

func TestParsePlatforms(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"linux/amd64", "linux/amd64", false},
		{"linux/amd64,linux/arm64", "linux/amd64,linux/arm64", false},
		{" linux/arm64 , linux/s390x", "linux/arm64,linux/s390x", false},
		{"linux/amd64,linux/amd64", "", true},
		{"darwin/arm64", "", true},
		{"linux/mips", "", true},
		{"amd64", "", true},
	} {
		ps, err := parsePlatforms(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("parsePlatforms(%q): err = %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if err == nil && platformList(ps) != c.want {
			t.Errorf("parsePlatforms(%q) = %s, want %s", c.in, platformList(ps), c.want)
		}
	}
}

// The bundle image of the committed bundle, as an OCI layout: one image index with an image per
// platform, each carrying the bundle's annotations and the version as labels; built twice with
// the same creation time it has the same digest.
func TestBundleImageIndex(t *testing.T) {
	ps, err := parsePlatforms("linux/amd64,linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	o := options{tag: "v0.1.0", registry: "registry.example/elo", format: "oci", bundleDir: "../../bundle",
		platforms: ps, build: buildID{version: "0.1.0", revision: "0123456789ab", created: time.Unix(1764000000, 0).UTC()}}
	digest := func(out string) string {
		o.out = out
		path, err := write(o, images["bundle"], "registry.example/elo/enhanced-liveness-operator-bundle:v0.1.0")
		if err != nil {
			t.Fatal(err)
		}
		l, err := layout.ImageIndexFromPath(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := l.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Manifests) != 1 || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v0.1.0" {
			t.Fatalf("index.json holds %+v, want one entry named v0.1.0", m.Manifests)
		}
		idx, err := l.ImageIndex(m.Manifests[0].Digest)
		if err != nil {
			t.Fatal(err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(im.Manifests) != 2 {
			t.Fatalf("the image index has %d images, want 2", len(im.Manifests))
		}
		for i, want := range []string{"amd64", "arm64"} {
			d := im.Manifests[i]
			if d.Platform == nil || d.Platform.OS != "linux" || d.Platform.Architecture != want {
				t.Errorf("image %d: platform %+v, want linux/%s", i, d.Platform, want)
			}
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range map[string]string{
				"org.opencontainers.image.version":                   "0.1.0",
				"org.opencontainers.image.revision":                  "0123456789ab",
				"operators.operatorframework.io.bundle.package.v1":   "enhanced-liveness-operator",
				"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
			} {
				if cf.Config.Labels[k] != v {
					t.Errorf("image %s: label %s = %q, want %q", want, k, cf.Config.Labels[k], v)
				}
			}
		}
		return m.Manifests[0].Digest.String()
	}
	a, b := digest(filepath.Join(t.TempDir(), "a")), digest(filepath.Join(t.TempDir(), "b"))
	if a != b {
		t.Errorf("two builds of the same bundle at the same time: digests %s and %s", a, b)
	}
}
