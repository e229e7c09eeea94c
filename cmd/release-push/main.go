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

// Command release-push publishes a release directory (`make release`'s dist/) to the registry
// it was built for, with nothing but that directory: the OCI archives of the operator, bundle
// and catalog images, each under the reference images.txt records and checked to have its
// digest there, and the Helm chart as an OCI artifact (<registry>/charts/<name>:<version>).
// Every file is checked against SHA256SUMS first. No container engine is used; credentials are
// those of `docker login` (~/.docker/config.json, or DOCKER_CONFIG).
//
//	release-push [--dist DIR] [--registry HOST[:PORT][/PATH]] [--insecure] [--ca-file FILE]
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/releasepush"
)

// version is the release this program was shipped with (make release links it in: -X main.version=).
var version = "unknown"

type options struct {
	dist, registry, caFile string
	insecure, version      bool
}

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	err := run(ctx, os.Args[1:], os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release-push:", err)
		cancel()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	if o.version {
		_, _ = fmt.Fprintln(out, "release-push", version)
		return nil
	}
	rel, err := releasepush.Load(o.dist, o.insecure)
	if err != nil {
		return err
	}
	if err := rel.CheckRegistry(o.registry, o.insecure); err != nil {
		return err
	}
	tr, err := transport(o.caFile)
	if err != nil {
		return err
	}
	remoteOpts := []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithTransport(tr),
		remote.WithUserAgent("release-push/" + version)}
	_, _ = fmt.Fprintf(out, "release-push: %s matches its %s; pushing to %s\n", o.dist, releasepush.SumsFile, rel.Registry)
	for _, im := range rel.Images {
		start := time.Now()
		if err := rel.PushImage(ctx, im, remoteOpts...); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(out, "release-push: pushed %s@%s (%s, %s)\n", im.Tag, im.Digest, im.File, since(start))
	}
	for _, c := range rel.Charts {
		start := time.Now()
		tag, d, err := rel.PushChart(ctx, c, o.insecure, remoteOpts...)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(out, "release-push: pushed the chart oci://%s@%s (%s, %s): helm install <name> oci://%s --version %s\n",
			tag, d, c, since(start), tag.Context(), tag.TagStr())
	}
	return nil
}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("release-push", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		_, _ = fmt.Fprintln(out, "usage: release-push [--dist DIR] [--registry HOST[:PORT][/PATH]] [--insecure] [--ca-file FILE]\n\n"+
			"Pushes the release in DIR (make release's dist/) to the registry it was built for.")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.dist, "dist", "", "the release directory (default: the directory of this program when it holds "+
		releasepush.ImagesFile+", else the current directory)")
	fs.StringVar(&o.registry, "registry", "", "the registry to push to; must be the one the release was built for "+
		"(make release REGISTRY=...), which its references pin by digest (default: that one, from "+releasepush.ImagesFile+")")
	fs.BoolVar(&o.insecure, "insecure", false, "allow a registry over plain HTTP")
	fs.BoolVar(&o.version, "version", false, "print the version of the release this program came with")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM file of CA certificates to trust besides the system's, for a registry with a private CA")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: the release directory is --dist", fs.Arg(0))
	}
	if o.dist == "" {
		o.dist = defaultDist()
	}
	return o, nil
}

// defaultDist is the directory of the program when the release ships it there, else ".".
func defaultDist() string {
	exe, err := os.Executable()
	if err == nil {
		dir := filepath.Dir(exe)
		if _, err := os.Stat(filepath.Join(dir, releasepush.ImagesFile)); err == nil {
			return dir
		}
	}
	return "."
}

// transport trusts the system's CAs and those of caFile.
func transport(caFile string) (http.RoundTripper, error) {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	if caFile == "" {
		return t, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("--ca-file " + caFile + ": no PEM certificate")
	}
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}

func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }
