// Command imagebuilder builds the project's images without a container engine or a registry: it
// compiles static Go binaries (stamped with the version, hack/version.sh) and writes each image
// either as a docker-archive tarball (what `docker save` writes, what `ctr -n k8s.io images
// import` loads into the local node's containerd) or as an OCI image layout holding one image
// index of every platform asked for (what `crane push DIR REF` pushes as a multi-arch image).
//
//	pause     the sandbox image: /pause                                  (hack/local-cluster/pause)
//	operator  the Dockerfile's content: /manager and /daemon, user 65532 (cmd, cmd/daemon)
//	app       the e2e test application: /app                             (test/e2e/app)
//	bundle    the OLM bundle image of -bundle-dir, as bundle.Dockerfile builds it
//	catalog   the OLM catalog image of the file-based catalog -catalog-dir: /bin/opm serving it,
//	          /bin/grpc_health_probe, both of each platform from -catalog-tools/<os>-<arch>/
//
// usage: go run ./hack/imagebuilder -out bin/images [-tag e2e] [-registry localhost]
//
//	[-platforms linux/amd64[,linux/arm64]] [-format docker|oci|oci-archive] [-version V]
//	[-bundle-dir bundle] [-catalog-dir DIR -catalog-tools DIR] [pause operator app bundle catalog]
//
// -format docker (the default) writes NAME.tar and takes one platform; -format oci writes the
// directory NAME/ (an OCI image layout), -format oci-archive the same layout as one tar file
// NAME.oci.tar; both write the image index's digest to NAME.digest. `make image-push` and
// `make sample-image-push` push the layout, `make release` writes archives; the name written
// into an image matters only to `ctr images import`.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// image describes one image: the Go packages compiled into it (path in the image -> package),
// its entrypoint and user; or, for the bundle, the directory it is made of.
type image struct {
	repo       string
	binaries   map[string]string
	entrypoint []string
	user       string
	// bundle: the image is the OLM bundle directory of -bundle-dir.
	bundle bool
	// catalog: the image serves the file-based catalog of -catalog-dir.
	catalog bool
}

// pauseImage is the name and the repository of the local node's sandbox image.
const pauseImage = "pause"

var images = map[string]image{
	pauseImage: {
		repo:       pauseImage,
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
	"bundle": {
		repo:   "enhanced-liveness-operator-bundle",
		bundle: true,
	},
	"catalog": {
		repo:    "enhanced-liveness-operator-catalog",
		catalog: true,
	},
}

// options are the command line, resolved.
type options struct {
	out, tag, registry, format, bundleDir string
	catalogDir, catalogTools              string
	platforms                             []platform
	build                                 buildID
}

func main() {
	o, names, err := parseFlags()
	if err != nil {
		fail(err)
	}
	for _, n := range names {
		img, ok := images[n]
		if !ok {
			fail(fmt.Errorf("unknown image %q (%s)", n, strings.Join(slices.Sorted(maps.Keys(images)), ", ")))
		}
		ref := fmt.Sprintf("%s/%s:%s", o.registry, img.repo, o.tag)
		start := time.Now()
		path, err := write(o, img, ref)
		if err != nil {
			fail(fmt.Errorf("%s: %w", n, err))
		}
		fmt.Printf("imagebuilder: %s (%s, version %s) -> %s (%s)\n", ref, platformList(o.platforms),
			o.build.version, path, time.Since(start).Round(time.Millisecond))
	}
}

func parseFlags() (options, []string, error) {
	var o options
	var platforms, version string
	flag.StringVar(&o.out, "out", "bin/images", "directory for the images")
	flag.StringVar(&o.tag, "tag", "e2e", "image tag")
	flag.StringVar(&o.registry, "registry", "localhost", "registry part of the image names")
	flag.StringVar(&platforms, "platforms", "linux/"+runtime.GOARCH, "comma-separated platforms (os/arch) of the images")
	flag.StringVar(&o.format, "format", "docker", "docker: a docker-archive NAME.tar (one platform); oci: an OCI image layout NAME/ "+
		"with an image index; oci-archive: that layout in one file, NAME.oci.tar")
	flag.StringVar(&version, "version", "", "version stamped into the binaries and the labels (default: hack/version.sh)")
	flag.StringVar(&o.bundleDir, "bundle-dir", "bundle", "the OLM bundle directory of the bundle image")
	flag.StringVar(&o.catalogDir, "catalog-dir", "", "the file-based catalog directory (one directory per package) of the catalog image")
	flag.StringVar(&o.catalogTools, "catalog-tools", "", "directory with <os>-<arch>/opm and <os>-<arch>/grpc_health_probe for each "+
		"platform of the catalog image (hack/build-olm.sh)")
	flag.Parse()
	names := flag.Args()
	if len(names) == 0 {
		names = []string{pauseImage, "operator", "app"}
	}
	var err error
	if o.platforms, err = parsePlatforms(platforms); err != nil {
		return o, nil, fmt.Errorf("-platforms: %w", err)
	}
	switch o.format {
	case "docker":
		if len(o.platforms) != 1 {
			return o, nil, fmt.Errorf("-format docker holds one platform, got %s: use -format oci", platforms)
		}
	case "oci", "oci-archive":
	default:
		return o, nil, fmt.Errorf("-format: %q is not docker, oci or oci-archive", o.format)
	}
	if slices.Contains(names, "catalog") && (o.catalogDir == "" || o.catalogTools == "") {
		return o, nil, fmt.Errorf("the catalog image needs -catalog-dir and -catalog-tools")
	}
	o.build, err = stamp(version)
	return o, names, err
}

// buildID is what a build is stamped with: the version and revision (hack/version.sh), the
// linker flags that carry them into the binaries, and the images' creation time.
type buildID struct {
	version, revision, ldflags string
	created                    time.Time
}

// stamp asks hack/version.sh for the version (version, when given, wins over its default), the
// revision and the linker flags. The creation time is SOURCE_DATE_EPOCH when set (make release
// sets the commit's time, so that rebuilding a commit gives the same digests), else now.
func stamp(version string) (buildID, error) {
	run := func(what string) (string, error) {
		cmd := exec.Command(filepath.Join("hack", "version.sh"), what)
		cmd.Env = os.Environ()
		if version != "" {
			cmd.Env = append(cmd.Env, "VERSION="+version)
		}
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("hack/version.sh %s (run imagebuilder from the repository's top directory): %w", what, err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	var b buildID
	var err error
	if b.version, err = run("version"); err != nil {
		return b, err
	}
	if b.revision, err = run("revision"); err != nil {
		return b, err
	}
	if b.ldflags, err = run("ldflags"); err != nil {
		return b, err
	}
	b.created = time.Now().UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var sec int64
		if _, err := fmt.Sscan(s, &sec); err != nil {
			return b, fmt.Errorf("SOURCE_DATE_EPOCH=%q: not seconds since the epoch", s)
		}
		b.created = time.Unix(sec, 0).UTC()
	}
	return b, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "imagebuilder:", err)
	os.Exit(1)
}
