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
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// targetKubernetes is the Kubernetes version the project builds against (k8s.io/* v0.37).
const targetKubernetes = "1.37"

var (
	repoBundle     = filepath.Join("..", "..", "bundle")
	repoDockerfile = filepath.Join("..", "..", "bundle.Dockerfile")
)

// TestCommittedBundleIsValid is `operator-sdk bundle validate ./bundle --select-optional
// suite=operatorframework --optional-values=k8s-version=1.37` plus the bundle-format checks:
// nothing may be reported, not even a warning.
func TestCommittedBundleIsValid(t *testing.T) {
	findings, err := Validate(repoBundle, repoDockerfile, targetKubernetes)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("validator summary:\n%s", Summary(findings))
	for _, f := range findings {
		t.Errorf("%s %s: %s", f.Level, f.Check, f.Message)
	}
}

// copyBundle copies the committed bundle and Dockerfile into a temporary directory.
func copyBundle(t *testing.T) (dir, dockerfile string) {
	t.Helper()
	tmp := t.TempDir()
	dir = filepath.Join(tmp, "bundle")
	err := filepath.Walk(repoBundle, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoBundle, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(repoDockerfile)
	if err != nil {
		t.Fatal(err)
	}
	dockerfile = filepath.Join(tmp, "bundle.Dockerfile")
	if err := os.WriteFile(dockerfile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, dockerfile
}

func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The checks can fail: each broken copy of the bundle is reported by the expected check.
func TestValidateReportsBrokenBundles(t *testing.T) {
	csvFile := filepath.Join("manifests", "enhanced-liveness-operator.clusterserviceversion.yaml")
	cases := []struct {
		name      string
		breakIt   func(t *testing.T, dir, dockerfile string)
		check     string
		level     string
		substring string
	}{
		{
			name: "Dockerfile label differs from the annotation",
			breakIt: func(t *testing.T, _, df string) {
				editFile(t, df, func(s string) string { return strings.Replace(s, "channels.v1=stable", "channels.v1=fast", 1) })
			},
			check: checkBundleFormat, level: levelError, substring: "channels.v1",
		},
		{
			name: "wrong media type",
			breakIt: func(t *testing.T, dir, df string) {
				for _, p := range []string{filepath.Join(dir, "metadata", "annotations.yaml"), df} {
					editFile(t, p, func(s string) string { return strings.ReplaceAll(s, "registry+v1", "plain+v0") })
				}
			},
			check: checkBundleFormat, level: levelError, substring: "mediatype",
		},
		{
			name: "object with a namespace",
			breakIt: func(t *testing.T, dir, _ string) {
				p := filepath.Join(dir, "manifests",
					"enhanced-liveness-operator-controller-manager-metrics-service_v1_service.yaml")
				editFile(t, p, func(s string) string {
					return strings.Replace(s, "metadata:\n", "metadata:\n  namespace: enhanced-liveness-system\n", 1)
				})
			},
			check: checkBundleFormat, level: levelError, substring: "must not name one",
		},
		{
			name: "unsupported kind",
			breakIt: func(t *testing.T, dir, _ string) {
				vap := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n" +
					"metadata:\n  name: x\nspec: {}\n"
				if err := os.WriteFile(filepath.Join(dir, "manifests", "x.yaml"), []byte(vap), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			check: checkBundleFormat, level: levelError, substring: "not a kind OLM installs",
		},
		{
			name: "no icon",
			breakIt: func(t *testing.T, dir, _ string) {
				editFile(t, filepath.Join(dir, csvFile), func(s string) string {
					return strings.Replace(s, "  icon:\n", "  iconRemoved:\n", 1)
				})
			},
			check: "OperatorHubV2", level: levelWarning, substring: "Icon not specified",
		},
		{
			name: "unknown category",
			breakIt: func(t *testing.T, dir, _ string) {
				editFile(t, filepath.Join(dir, csvFile), func(s string) string {
					return strings.Replace(s, "categories: Monitoring", "categories: Gardening", 1)
				})
			},
			check: "StandardCategories", level: levelError, substring: "Gardening",
		},
		{
			name: "top-level spec field of an example without a spec descriptor",
			breakIt: func(t *testing.T, dir, _ string) {
				editFile(t, filepath.Join(dir, csvFile), func(s string) string {
					return strings.Replace(s, "        path: rateLimit\n", "        path: rateLimitRemoved\n", 1)
				})
			},
			check: checkDescriptors, level: levelError, substring: "spec.rateLimit has no spec descriptor",
		},
		{
			name: "channel outside the naming convention",
			breakIt: func(t *testing.T, dir, df string) {
				for _, p := range []string{filepath.Join(dir, "metadata", "annotations.yaml"), df} {
					editFile(t, p, func(s string) string { return strings.ReplaceAll(s, "stable", "nightly") })
				}
			},
			check: "GoodPractices", level: levelWarning, substring: "nightly",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, df := copyBundle(t)
			tc.breakIt(t, dir, df)
			findings, err := Validate(dir, df, targetKubernetes)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				if f.Check == tc.check && f.Level == tc.level && strings.Contains(f.Message, tc.substring) {
					return
				}
			}
			t.Fatalf("no %s %s containing %q among %+v", tc.check, tc.level, tc.substring, findings)
		})
	}
}

// The base CSV carries the icon as base64; icon.svg is its editable source.
func TestBaseCSVIconIsIconSVG(t *testing.T) {
	base := filepath.Join("..", "..", "config", "manifests", "bases")
	svg, err := os.ReadFile(filepath.Join(base, "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(base, "enhanced-liveness-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var csv struct {
		Spec struct {
			Icon []struct {
				Data      string `json:"base64data"`
				MediaType string `json:"mediatype"`
			} `json:"icon"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &csv); err != nil {
		t.Fatal(err)
	}
	if len(csv.Spec.Icon) != 1 || csv.Spec.Icon[0].MediaType != "image/svg+xml" {
		t.Fatalf("want one image/svg+xml icon, got %+v", csv.Spec.Icon)
	}
	if csv.Spec.Icon[0].Data != base64.StdEncoding.EncodeToString(svg) {
		t.Fatal("spec.icon of the base CSV is not base64(icon.svg): run `base64 -w0 config/manifests/bases/icon.svg`")
	}
}
