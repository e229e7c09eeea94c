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
	"slices"
	"strings"
	"testing"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/admissionpolicy"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
)

// These tests keep what the install pages, the OLM console and the compatibility page tell a user
// true of the shipped files.

// A release installs from images the user pushes from its archives: no page may say that no image
// is published two lines above sections that install from the release's image references.
func TestInstallDoesNotDenyTheReleaseImages(t *testing.T) {
	for _, rel := range []string{"docs/install.md", "README.md", "docs/release.md"} {
		if m := regexp.MustCompile(`(?i)no images? (is|are) published`).FindString(readFile(t, rel)); m != "" {
			t.Errorf("%s says %q: a release's files install from the images its archives hold, pushed as its README.md says", rel, m)
		}
	}
}

// The CSV description (the OLM console's) names only steps that exist: every config/ directory it
// names is in the repository, and none of them is said to hold an admission policy (the manager
// creates them; config/olm holds the metrics reader only).
func TestCSVDescriptionStepsExist(t *testing.T) {
	desc := readCSV(t).Spec.Description
	dirs := regexp.MustCompile("`(config/[a-z0-9/-]+)`").FindAllStringSubmatch(desc, -1)
	if len(dirs) == 0 {
		t.Fatal("the CSV description names no config/ directory: update this test")
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(root, d[1], "kustomization.yaml")); err != nil {
			t.Errorf("the CSV description names %s, which is no kustomization: %v", d[1], err)
		}
	}
	for s := range strings.SplitSeq(strings.Join(strings.Fields(desc), " "), ". ") {
		if strings.Contains(s, "config/") && admissionPolicy.MatchString(s) {
			t.Errorf("the CSV description tells users to apply an admission policy from config/: %q; the manager creates them", s)
		}
	}
	for _, f := range globFiles(t, "config/olm/*.yaml") {
		if strings.Contains(readFile(t, f), "kind: ValidatingAdmissionPolicy") {
			t.Errorf("%s holds an admission policy: the manager creates them", f)
		}
	}
}

var admissionPolicy = regexp.MustCompile(`(?i)admission ?polic`)

// The OLM console offers "Create" for every owned CRD that is not internal: the objects nobody but
// the operator may write (RestartHolds, which an admission policy refuses everyone else; the
// NodePodProbes and their reports, the manager's and the daemons') are internal objects.
func TestCSVOffersNoCreateOfOperatorObjects(t *testing.T) {
	csv := readCSV(t)
	var internal []string
	if err := json.Unmarshal([]byte(csv.Metadata.Annotations["operators.operatorframework.io/internal-objects"]), &internal); err != nil {
		t.Fatalf("the CSV's internal-objects annotation: %v", err)
	}
	owned := map[string]string{}
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[o.Kind] = o.Name
	}
	for _, kind := range []string{"RestartHold", "NodePodProbe", "NodePodProbeReport"} {
		name, ok := owned[kind]
		if !ok {
			t.Errorf("the CSV owns no %s CRD", kind)
			continue
		}
		if !slices.Contains(internal, name) {
			t.Errorf("%s (%s) is not an internal object of the CSV: the console offers \"Create %s\", which always fails", kind, name, kind)
		}
	}
	if regexp.MustCompile(`(?i)create (a )?RestartHold`).MatchString(csv.Spec.Description) {
		t.Error("the CSV description invites users to create a RestartHold")
	}
}

// Every page that counts the admission policies the manager creates says how many it creates,
// and install.md names each of them.
func TestAdmissionPolicyCount(t *testing.T) {
	policies := []string{admissionpolicy.Name, admissionpolicy.DaemonNodeScopeName, admissionpolicy.RestartHoldsName}
	words := map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
	count := regexp.MustCompile(`(?i)\b(one|two|three|four|five|six) (ValidatingAdmissionPolicies|admission policies)`)
	pages := append(globFiles(t, "docs/*.md"), "README.md")
	texts := map[string]string{"the CSV description": readCSV(t).Spec.Description}
	for _, p := range pages {
		texts[p] = readFile(t, p)
	}
	for where, text := range texts {
		for _, m := range count.FindAllStringSubmatch(strings.Join(strings.Fields(text), " "), -1) {
			if words[strings.ToLower(m[1])] != len(policies) {
				t.Errorf("%s says %q: the manager creates %d (%s)", where, m[0], len(policies), strings.Join(policies, ", "))
			}
		}
	}
	install := readFile(t, "docs/install.md")
	for _, p := range policies {
		if !strings.Contains(install, "`"+p+"`") {
			t.Errorf("docs/install.md does not name the admission policy %s", p)
		}
	}
}

// The roles for people are aggregated as install.md says: the admin, editor and viewer roles into
// the cluster's admin, edit and view, the NodePodProbe viewer into none.
func TestRolesForPeopleAggregation(t *testing.T) {
	row := tableRow(t, "docs/install.md", "| roles for people |")
	for _, claim := range []string{"aggregated into the cluster's `admin`, `edit` and `view` roles", "a viewer role for RestartHolds aggregated into `view`", "not aggregated"} {
		if !strings.Contains(row, claim) {
			t.Fatalf("install.md's roles for people no longer say %q: update this test with the page", claim)
		}
	}
	into := map[string]string{"admin": "admin", "editor": "edit", "viewer": "view"}
	files := globFiles(t, "config/rbac/*_role.yaml")
	checked := 0
	for _, f := range files {
		m := regexp.MustCompile(`_(admin|editor|viewer)_role\.yaml$`).FindStringSubmatch(f)
		if m == nil {
			continue
		}
		checked++
		var role struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		readYAML(t, f, &role)
		var aggregated []string
		for k, v := range role.Metadata.Labels {
			if target, ok := strings.CutPrefix(k, "rbac.authorization.k8s.io/aggregate-to-"); ok && v == "true" {
				aggregated = append(aggregated, target)
			}
		}
		want := []string{into[m[1]]}
		if strings.Contains(f, "nodepodprobe_") {
			want = nil // names the pods of every namespace: bound on purpose, not aggregated
		}
		if !slices.Equal(aggregated, want) {
			t.Errorf("%s is aggregated into %v, install.md says %v", f, aggregated, want)
		}
	}
	if checked < 7 {
		t.Errorf("found %d roles for people in config/rbac, want the 7 install.md describes", checked)
	}
}

// compatibility.md's GKE line is true of the manifests: the daemon's PriorityClass is the one
// the shipped ResourceQuota is scoped to, and the page names that quota.
func TestGKEQuotaIsShipped(t *testing.T) {
	var q struct {
		Metadata struct{ Name string } `json:"metadata"`
		Spec     struct {
			ScopeSelector struct {
				MatchExpressions []struct {
					ScopeName string   `json:"scopeName"`
					Values    []string `json:"values"`
				} `json:"matchExpressions"`
			} `json:"scopeSelector"`
		} `json:"spec"`
	}
	readYAML(t, "config/manager/daemon_priority_quota.yaml", &q)
	m := q.Spec.ScopeSelector.MatchExpressions
	if len(m) != 1 || m[0].ScopeName != "PriorityClass" || !slices.Equal(m[0].Values, []string{daemonset.PriorityClass}) {
		t.Errorf("config/manager/daemon_priority_quota.yaml is not scoped to the daemon's PriorityClass %s: %+v", daemonset.PriorityClass, m)
	}
	if !strings.Contains(readFile(t, "config/manager/kustomization.yaml"), "daemon_priority_quota.yaml") {
		t.Error("config/manager does not install daemon_priority_quota.yaml")
	}
	compat := strings.Join(strings.Fields(readFile(t, "docs/compatibility.md")), " ")
	for _, want := range []string{"GKE", "`enhanced-liveness-operator-" + q.Metadata.Name + "`", daemonset.PriorityClass} {
		if !strings.Contains(compat, want) {
			t.Errorf("docs/compatibility.md does not name %s", want)
		}
	}
}

func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// globFiles are the files matching pattern, relative to the repository root.
func globFiles(t *testing.T, pattern string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, m := range matches {
		r, err := filepath.Rel(root, m)
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, r)
	}
	return rel
}
