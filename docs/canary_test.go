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

package docs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// TestCanaryScheduleTextsMatchRules: every text that describes maxHold's canary schedule to a
// user (kubectl explain, the OLM console, the API reference, --default-max-hold --help, the
// reference page, the chart's schema, the policy page) says the schedule the rules run: the first
// canary rules.FirstCanaryWait after the onset, each failed one doubling the wait, up to maxHold,
// and, where the API is described, no canary for DaemonNotReporting. None describes the old one
// (a canary after maxHold, up to 8 × maxHold).
func TestCanaryScheduleTextsMatchRules(t *testing.T) {
	// The schedule of the code, which the texts below describe.
	for n := range int32(6) {
		want := min(rules.FirstCanaryWait<<n, 10*time.Minute)
		if got := rules.FirstWait(10*time.Minute, n); got != want {
			t.Fatalf("rules.FirstWait(10m, %d) = %s, want %s: the rules no longer wait %s doubling up to maxHold; update the texts this test checks",
				n, got, want, rules.FirstCanaryWait)
		}
	}
	first := rules.FirstCanaryWait.String()

	api := map[string]string{
		"config/crd/bases spec.maxHold (kubectl explain)":     crdMaxHold(t),
		"bundle CSV specDescriptor maxHold (the OLM console)": csvMaxHold(t),
		"docs/api-reference.md maxHold":                       tableRow(t, "docs/api-reference.md", "| `maxHold` _"),
	}
	flags, err := binaryFlags(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	others := map[string]string{
		"--default-max-hold --help":                               flags[manager+" --default-max-hold"].Usage,
		"docs/reference.md --default-max-hold":                    tableRow(t, "docs/reference.md", "| `--default-max-hold` |"),
		"chart values.schema.json manager.flags.default-max-hold": chartFlagDescription(t, "default-max-hold"),
		"docs/policy.md maxHold":                                  tableRow(t, "docs/policy.md", "| `maxHold` |"),
	}
	for name, text := range api {
		others[name] = text
		if !strings.Contains(normalizeText(text), "A DaemonNotReporting hold gets no canary") {
			t.Errorf("%s does not say that a DaemonNotReporting hold gets no canary:\n%s", name, text)
		}
	}
	for name, text := range others {
		for _, p := range scheduleProblems(text, first) {
			t.Errorf("%s %s:\n%s", name, p, text)
		}
	}
}

// The check finds a text of the old schedule and one of another first wait.
func TestScheduleProblems(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"the longest wait between two canaries: the first goes 30 s after the onset, each that fails doubles the wait, up to maxHold", ""},
		{"maxHold is how long a doubt hold lasts before one canary: a canary after maxHold, up to 8 × maxHold", "the old schedule"},
		{"the longest wait between two canaries: the first goes 45s after the onset, each that fails doubles the wait", "does not say the first canary goes 30s"},
		{"the first goes 30s after the onset; the wait grows", "does not say each failed canary doubles"},
	} {
		got := strings.Join(scheduleProblems(tc.text, "30s"), "; ")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("scheduleProblems(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

var (
	// "30 s" in prose is "30s" in code.
	spacedSeconds = regexp.MustCompile(`\b(\d+) s\b`)
	// The schedule before the canary rules: a canary after maxHold, holds up to 8 × maxHold.
	oldSchedule = regexp.MustCompile(`(?i)\d+\s*(×|x|times)\s*maxHold|canar(y|ies)( goes| is released| restart)? after maxHold`)
)

func normalizeText(s string) string {
	s = strings.ReplaceAll(s, "<br />", " ")
	return spacedSeconds.ReplaceAllString(strings.Join(strings.Fields(s), " "), "${1}s")
}

func scheduleProblems(text, first string) []string {
	n := normalizeText(text)
	var problems []string
	if !strings.Contains(n, first+" after the") {
		problems = append(problems, "does not say the first canary goes "+first+" after the onset (rules.FirstCanaryWait)")
	}
	if !strings.Contains(n, "doubles the wait") && !strings.Contains(n, "doubling") {
		problems = append(problems, "does not say each failed canary doubles the wait")
	}
	if !strings.Contains(n, "up to maxHold") && !strings.Contains(n, "up to `maxHold`") &&
		!strings.Contains(n, "longest wait between two canar") {
		problems = append(problems, "does not say the wait is at most maxHold")
	}
	if m := oldSchedule.FindString(n); m != "" {
		problems = append(problems, "describes the old schedule ("+m+")")
	}
	return problems
}

func readYAML(t *testing.T, rel string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

func crdMaxHold(t *testing.T) string {
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]struct {
							Properties map[string]struct {
								Description string `json:"description"`
							} `json:"properties"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	readYAML(t, "config/crd/bases/policy.enhancedliveness.io_enhancedlivenesspolicies.yaml", &crd)
	if len(crd.Spec.Versions) == 0 {
		t.Fatal("the EnhancedLivenessPolicy CRD has no version")
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["maxHold"].Description
}

// bundleCSV is the part of the bundle's ClusterServiceVersion these tests read.
type bundleCSV struct {
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Description               string `json:"description"`
		CustomResourceDefinitions struct {
			Owned []struct {
				Name, Kind      string
				SpecDescriptors []struct {
					Path, Description string
				} `json:"specDescriptors"`
			} `json:"owned"`
		} `json:"customresourcedefinitions"`
	} `json:"spec"`
}

func readCSV(t *testing.T) bundleCSV {
	t.Helper()
	var csv bundleCSV
	readYAML(t, "bundle/manifests/enhanced-liveness-operator.clusterserviceversion.yaml", &csv)
	return csv
}

func csvMaxHold(t *testing.T) string {
	for _, o := range readCSV(t).Spec.CustomResourceDefinitions.Owned {
		for _, d := range o.SpecDescriptors {
			if o.Kind == "EnhancedLivenessPolicy" && d.Path == "maxHold" {
				return d.Description
			}
		}
	}
	t.Fatal("the CSV has no specDescriptor maxHold of EnhancedLivenessPolicy")
	return ""
}

// tableRow is the one line of the page rel that begins with prefix.
func tableRow(t *testing.T, rel, prefix string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, prefix) {
			found = append(found, line)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: want one line beginning %q, found %d", rel, prefix, len(found))
	}
	return found[0]
}

func chartFlagDescription(t *testing.T, flag string) string {
	b, err := os.ReadFile(filepath.Join(root, "charts/enhanced-liveness-operator/values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	type node struct {
		Description string           `json:"description"`
		Properties  map[string]*node `json:"properties"`
	}
	var s node
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	f := s.Properties["manager"].Properties["flags"].Properties[flag]
	if f == nil {
		t.Fatalf("values.schema.json has no manager.flags.%s", flag)
	}
	return f.Description
}
