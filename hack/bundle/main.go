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

// Command bundle generates the OLM bundle (registry+v1) from the rendered config/manifests, and
// validates a bundle directory. It replaces `operator-sdk generate bundle` / `bundle validate`,
// built on the operator-framework/api types and validators.
//
//	kustomize build config/manifests | go run ./hack/bundle generate --version 0.1.0 ...
//	go run ./hack/bundle validate --dir bundle --dockerfile bundle.Dockerfile
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bundle generate|validate [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "generate":
		err = generateCmd(os.Args[2:], os.Stdin, os.Stderr)
	case "validate":
		err = validateCmd(os.Args[2:], os.Stdout)
	default:
		err = fmt.Errorf("unknown command %q (generate or validate)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func generateCmd(args []string, stdin io.Reader, log io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	var o Options
	var channels, input, outDir, dockerfile, root string
	fs.StringVar(&o.Package, "package", "enhanced-liveness-operator", "OLM package name")
	fs.StringVar(&o.Version, "version", "", "operator version (semver, without v)")
	fs.StringVar(&channels, "channels", "stable", "comma-separated channels")
	fs.StringVar(&o.DefaultChannel, "default-channel", "stable", "default channel (empty for none)")
	fs.StringVar(&o.ManagerImage, "image", "", "manager image")
	fs.StringVar(&o.DaemonImage, "daemon-image", "", "node daemon image (default: the manager image)")
	fs.StringVar(&o.CreatedAt, "created-at", "", "createdAt annotation (fixed, for reproducible bundles)")
	fs.StringVar(&o.Replaces, "replaces", "", "CSV this version replaces (optional)")
	fs.StringVar(&input, "input", "-", "rendered config/manifests (kustomize build output); - for stdin")
	fs.StringVar(&root, "root", ".", "repository root the paths below are relative to")
	fs.StringVar(&outDir, "output-dir", "bundle", "bundle directory")
	fs.StringVar(&dockerfile, "dockerfile", "bundle.Dockerfile", "bundle Dockerfile")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Channels = strings.Split(channels, ",")
	if o.DaemonImage == "" {
		o.DaemonImage = o.ManagerImage
	}

	r := stdin
	if input != "-" {
		f, err := os.Open(input)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	objs, err := readObjects(r)
	if err != nil {
		return err
	}
	b, err := Generate(objs, o)
	if err != nil {
		return err
	}
	files, err := b.files(outDir, dockerfile)
	if err != nil {
		return err
	}
	if err := writeFiles(root, outDir, files); err != nil {
		return err
	}
	for _, d := range b.Dropped {
		_, _ = fmt.Fprintln(log, "bundle: not in the bundle:", d)
	}
	_, _ = fmt.Fprintf(log, "bundle: wrote %d files to %s and %s\n", len(files)-1, filepath.Join(root, outDir), dockerfile)
	return nil
}

func validateCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	dir := fs.String("dir", "bundle", "bundle directory")
	dockerfile := fs.String("dockerfile", "bundle.Dockerfile", "bundle Dockerfile")
	k8s := fs.String("k8s-version", "1.37", "Kubernetes version to check deprecated APIs against")
	if err := fs.Parse(args); err != nil {
		return err
	}
	findings, err := Validate(*dir, *dockerfile, *k8s)
	if err != nil {
		return err
	}
	for _, f := range findings {
		_, _ = fmt.Fprintf(out, "%s %s: %s\n", strings.ToUpper(f.Level), f.Check, f.Message)
	}
	_, _ = fmt.Fprint(out, Summary(findings))
	if len(findings) > 0 {
		return fmt.Errorf("%d findings", len(findings))
	}
	return nil
}
