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
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"sigs.k8s.io/yaml"
)

const (
	levelError        = "error"
	levelWarning      = "warning"
	checkBundleFormat = "BundleFormat"
)

// maxBundleSize is the limit of a bundle OLM can stage (one ConfigMap).
const maxBundleSize = 1 << 20

// Finding is one error or warning of one check.
type Finding struct {
	Check   string
	Level   string // levelError or levelWarning
	Message string
}

// namedValidator pairs an operator-framework validator with the name operator-sdk shows for it.
type namedValidator struct {
	name string
	v    interfaces.Validator
}

// suite is what `operator-sdk bundle validate --select-optional suite=operatorframework` runs:
// the default bundle validators plus the optional operatorframework suite.
var suite = []namedValidator{
	{kindCSV, validation.ClusterServiceVersionValidator},
	{kindCRD, validation.CustomResourceDefinitionValidator},
	{"Bundle", validation.BundleValidator},
	{"OperatorHubV2", validation.OperatorHubV2Validator},
	{"StandardCapabilities", validation.StandardCapabilitiesValidator},
	{"StandardCategories", validation.StandardCategoriesValidator},
	{"GoodPractices", validation.GoodPracticesValidator},
	{"AlphaDeprecatedAPIs", validation.AlphaDeprecatedAPIsValidator},
}

// CheckNames lists every check Validate reports on, in order.
func CheckNames() []string {
	var names []string
	for _, s := range suite {
		names = append(names, s.name)
	}
	return append(names, checkDescriptors, checkBundleFormat)
}

// Validate loads bundleDir like OLM does and runs the validator suite against k8sVersion, then
// the spec descriptor check of the scorecard (descriptors.go) and the bundle-format checks
// operator-sdk adds: annotations, Dockerfile labels, supported kinds, no namespaces, size.
func Validate(bundleDir, dockerfile, k8sVersion string) ([]Finding, error) {
	bundle, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		return nil, fmt.Errorf("loading bundle %s: %w", bundleDir, err)
	}
	objs := append(bundle.ObjectsToValidate(), map[string]string{"k8s-version": k8sVersion})
	var out []Finding
	for _, s := range suite {
		for _, r := range s.v.Validate(objs...) {
			for _, e := range r.Errors {
				out = append(out, finding(s.name, e))
			}
			for _, e := range r.Warnings {
				out = append(out, finding(s.name, e))
			}
		}
	}
	out = append(out, descriptorChecks(bundle)...)
	format, err := formatChecks(bundleDir, dockerfile, bundle)
	if err != nil {
		return nil, err
	}
	return append(out, format...), nil
}

func finding(check string, e errors.Error) Finding {
	level := levelWarning
	if e.Level == errors.LevelError {
		level = levelError
	}
	return Finding{Check: check, Level: level, Message: e.Error()}
}

func formatChecks(bundleDir, dockerfile string, bundle *manifests.Bundle) ([]Finding, error) {
	var out []Finding
	add := func(format string, args ...any) {
		out = append(out, Finding{Check: checkBundleFormat, Level: levelError, Message: fmt.Sprintf(format, args...)})
	}

	// metadata/annotations.yaml
	data, err := os.ReadFile(filepath.Join(bundleDir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	var af struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(data, &af); err != nil {
		add("metadata/annotations.yaml: %v", err)
	}
	ann := af.Annotations
	for k, want := range map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
	} {
		if ann[k] != want {
			add("annotation %s is %q, want %q", k, ann[k], want)
		}
	}
	pkg := ann["operators.operatorframework.io.bundle.package.v1"]
	channels := strings.Split(ann["operators.operatorframework.io.bundle.channels.v1"], ",")
	if pkg == "" || channels[0] == "" {
		add("annotations must name the package and at least one channel")
	}
	if d, ok := ann["operators.operatorframework.io.bundle.channel.default.v1"]; ok && !contains(channels, d) {
		add("default channel %q is not among the channels %v", d, channels)
	}
	if cfg, ok := ann["operators.operatorframework.io.test.config.v1"]; ok {
		if ann["operators.operatorframework.io.test.mediatype.v1"] != "scorecard+v1" {
			add("test config annotation without test mediatype scorecard+v1")
		}
		if _, err := os.Stat(filepath.Join(bundleDir, cfg, "config.yaml")); err != nil {
			add("scorecard config %s: %v", cfg, err)
		}
	}
	if bundle.Package != "" && pkg != bundle.Package {
		add("annotations package %q differs from the bundle's %q", pkg, bundle.Package)
	}

	// bundle.Dockerfile labels == annotations
	labels, err := dockerfileLabels(dockerfile)
	if err != nil {
		return nil, err
	}
	for k, v := range ann {
		if labels[k] != v {
			add("%s: label %s=%q, annotation %q", filepath.Base(dockerfile), k, labels[k], v)
		}
	}
	for k := range labels {
		if _, ok := ann[k]; !ok && strings.HasPrefix(k, "operators.operatorframework.io.") {
			add("%s: label %s has no annotation", filepath.Base(dockerfile), k)
		}
	}

	// Only supported kinds, no namespaces.
	for _, u := range bundle.Objects {
		k := u.GetKind()
		if k != kindCSV && k != kindCRD && !supportedKinds[k] {
			add("manifests: %s %s is not a kind OLM installs from a bundle", k, u.GetName())
		}
		if u.GetNamespace() != "" {
			add("manifests: %s %s has namespace %q; bundle objects must not name one", k, u.GetName(), u.GetNamespace())
		}
	}

	// Size: OLM stages a bundle in one ConfigMap.
	if bundle.Size >= maxBundleSize {
		add("bundle size %d bytes is not under 1 MiB", bundle.Size)
	}

	// Only the registry+v1 directories.
	entries, err := os.ReadDir(bundleDir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !contains([]string{"manifests", "metadata", "tests"}, e.Name()) {
			add("unexpected %s in the bundle directory", e.Name())
		}
	}
	return out, nil
}

// dockerfileLabels reads LABEL key=value lines.
func dockerfileLabels(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "LABEL ") {
			continue
		}
		for kv := range strings.FieldsSeq(strings.TrimPrefix(line, "LABEL ")) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("%s: malformed label %q", path, kv)
			}
			labels[k] = strings.Trim(v, `"`)
		}
	}
	return labels, sc.Err()
}

// Summary counts errors and warnings per check, every check listed.
func Summary(findings []Finding) string {
	counts := map[string][2]int{}
	for _, f := range findings {
		c := counts[f.Check]
		if f.Level == levelError {
			c[0]++
		} else {
			c[1]++
		}
		counts[f.Check] = c
	}
	var b strings.Builder
	for _, n := range CheckNames() {
		fmt.Fprintf(&b, "%-26s errors=%d warnings=%d\n", n, counts[n][0], counts[n][1])
	}
	return b.String()
}
