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

// Command images builds the images of `make test-olm` without a Docker engine and pushes them to
// the test registry (hack/olm/registry), trusting the registry's CA:
//
//	images tools   -bin DIR -busybox FILE -registry HOST -ca FILE -olm-tag T -opm-tag T -sdk-tag T
//	    HOST/olm:<olm-tag>      /bin/olm, /bin/catalog, /bin/cpb; sh and cp (busybox)
//	    HOST/opm:<opm-tag>      /bin/opm; sh, cat and gzip; label ...index.configs.v1=/configs
//	    HOST/operator-framework/scorecard-test:<sdk-tag>   /usr/local/bin/scorecard-test
//	    HOST/scorecard-untar:<sdk-tag>                     tar (busybox)
//	images archive -file TAR -ref REF [-ref REF ...] -ca FILE     a docker-archive tarball (hack/imagebuilder:
//	    the operator, and the OLM bundles)
//	images copy    -from REF -ref REF [-ref REF ...] -ca FILE     an image of the registry under more names
//	images catalog -file FILE -bin DIR -ref REF -ca FILE          a catalog image of a file-based catalog
//	    (make release's catalog.yaml) for a CatalogSource: opm serve and grpc_health_probe from DIR
//
// Binaries are static Go programs and Debian's statically linked busybox, each on one layer
// without a base image.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: images tools|archive|copy|catalog [flags] (see the package comment)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "tools":
		err = toolsCmd(os.Args[2:])
	case "archive":
		err = archiveCmd(os.Args[2:])
	case "copy":
		err = copyCmd(os.Args[2:])
	case "catalog":
		err = catalogCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (tools, archive, copy or catalog)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

// refs collects repeated -ref flags.
type refs []string

func (r *refs) String() string     { return strings.Join(*r, ",") }
func (r *refs) Set(v string) error { *r = append(*r, v); return nil }

func required(fs *flag.FlagSet, names ...string) error {
	var errs []error
	for _, n := range names {
		if fs.Lookup(n).Value.String() == "" {
			errs = append(errs, fmt.Errorf("-%s is required", n))
		}
	}
	return errors.Join(errs...)
}

func toolsCmd(args []string) error {
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	bin := fs.String("bin", "", "directory with olm, catalog, cpb, opm and scorecard-test (hack/build-olm.sh)")
	busybox := fs.String("busybox", "", "a statically linked busybox")
	reg := fs.String("registry", "", "registry host:port")
	ca := fs.String("ca", "", "CA of the registry")
	olmTag := fs.String("olm-tag", "", "tag of the olm image (the OLM version)")
	opmTag := fs.String("opm-tag", "", "tag of the opm image (the operator-registry version)")
	sdkTag := fs.String("sdk-tag", "", "tag of the scorecard images (the operator-sdk version)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required(fs, "bin", "busybox", "registry", "ca", "olm-tag", "opm-tag", "sdk-tag"); err != nil {
		return err
	}
	tr, err := transport(*ca)
	if err != nil {
		return err
	}
	bb, err := readExecutable(*busybox)
	if err != nil {
		return err
	}
	bins := map[string][]byte{}
	for _, b := range []string{"olm", "catalog", "cpb", "opm", "scorecard-test"} {
		if bins[b], err = readExecutable(filepath.Join(*bin, b)); err != nil {
			return err
		}
	}
	images := toolImages(bins, bb, *reg, *olmTag, *opmTag, *sdkTag)
	for _, im := range images {
		img, err := im.l.image(im.cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", im.ref, err)
		}
		if err := push(img, im.ref, tr); err != nil {
			return err
		}
	}
	return nil
}

// toolImage is one image of OLM's tools with where it is pushed.
type toolImage struct {
	ref string
	l   *layer
	cfg v1.Config
}

// toolImages lays out the images of OLM's tools from their binaries (bins by name) and a static
// busybox, named in registry reg with their tags.
func toolImages(bins map[string][]byte, bb []byte, reg, olmTag, opmTag, sdkTag string) []toolImage {
	// Every tool image has a world-writable /tmp and busybox with the applets it needs.
	busyboxIn := func(l *layer, applets ...string) {
		l.dir("tmp", 0o1777)
		l.file("bin/busybox", 0o755, bb)
		for _, a := range applets {
			l.symlink("bin/"+a, "busybox")
		}
	}

	olm := newLayer()
	olm.file("bin/olm", 0o755, bins["olm"])
	olm.file("bin/catalog", 0o755, bins["catalog"])
	// The catalog-operator's bundle unpack Jobs run `/bin/cp -Rv /bin/cpb /util/cpb` in this image.
	olm.file("bin/cpb", 0o755, bins["cpb"])
	busyboxIn(olm, "sh", "cp")

	opm := newLayer()
	opm.file("bin/opm", 0o755, bins["opm"])
	opm.dir(configsDir[1:], 0o755)
	// operator-sdk's registry pod runs `sh -c "opm serve ..."`, its init container decompresses
	// the catalog with sh, cat and gzip (--decompression-image).
	busyboxIn(opm, "sh", "cat", "gzip")

	scorecard := newLayer()
	scorecard.dir("tmp", 0o1777)
	scorecard.file("usr/local/bin/scorecard-test", 0o755, bins["scorecard-test"])
	scorecard.dir("opt/scorecard-test", 0o755)

	untar := newLayer()
	busyboxIn(untar, "sh", "tar", "gzip")

	return []toolImage{
		{reg + "/olm:" + olmTag, olm, v1.Config{Entrypoint: []string{"/bin/olm"}, User: "1001"}},
		{reg + "/opm:" + opmTag, opm, v1.Config{Entrypoint: []string{"/bin/opm"}, User: "1001",
			Labels: map[string]string{indexConfigsLabel: configsDir}}},
		{reg + "/operator-framework/scorecard-test:" + sdkTag, scorecard, v1.Config{
			Entrypoint: []string{"/usr/local/bin/scorecard-test"}, User: "1001",
			WorkingDir: "/opt/scorecard-test", Env: []string{"HOME=/opt/scorecard-test"}}},
		{reg + "/scorecard-untar:" + sdkTag, untar, v1.Config{User: "1001"}},
	}
}

func archiveCmd(args []string) error {
	fs := flag.NewFlagSet("archive", flag.ContinueOnError)
	file := fs.String("file", "", "docker-archive tarball with one image")
	ca := fs.String("ca", "", "CA of the registry")
	var to refs
	fs.Var(&to, "ref", "where to push (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required(fs, "file", "ca", "ref"); err != nil {
		return err
	}
	tr, err := transport(*ca)
	if err != nil {
		return err
	}
	img, err := tarball.ImageFromPath(*file, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", *file, err)
	}
	for _, r := range to {
		if err := push(img, r, tr); err != nil {
			return err
		}
	}
	return nil
}

func copyCmd(args []string) error {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	from := fs.String("from", "", "image to copy")
	ca := fs.String("ca", "", "CA of the registry")
	var to refs
	fs.Var(&to, "ref", "where to push (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required(fs, "from", "ca", "ref"); err != nil {
		return err
	}
	tr, err := transport(*ca)
	if err != nil {
		return err
	}
	src, err := name.ParseReference(*from)
	if err != nil {
		return fmt.Errorf("%q: %w", *from, err)
	}
	img, err := remote.Image(src, remote.WithTransport(tr))
	if err != nil {
		return fmt.Errorf("pull %s: %w", *from, err)
	}
	for _, r := range to {
		if err := push(img, r, tr); err != nil {
			return err
		}
	}
	return nil
}

// transport trusts the system roots and the registry's CA.
func transport(caFile string) (http.RoundTripper, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", caFile)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}

func push(img v1.Image, ref string, tr http.RoundTripper) error {
	start := time.Now()
	r, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("%q: %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithTransport(tr)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("images: pushed %s@%s (%s)\n", ref, d, time.Since(start).Round(time.Millisecond))
	return nil
}

func readExecutable(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("%s: not an executable file", path)
	}
	return os.ReadFile(path)
}
