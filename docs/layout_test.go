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
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The layout table of development.md names every Go package of the module's own trees, and
// every path it names exists: a package moved, added or removed without its row fails here.
func TestCodeLayoutMatchesTree(t *testing.T) {
	rows := mustRows(t, readPage(t, "docs/development.md"), "Code layout")
	named := map[string]bool{}
	for _, row := range rows {
		for _, p := range layoutPaths(cell(row, 0)) {
			named[p] = true
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("development.md Code layout names %q, which is not in the tree", p)
			}
		}
	}
	pkgs, err := goPackageDirs(root, "api", "cmd", "internal", "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if !named[p] {
			t.Errorf("package %q is not in development.md Code layout: add a row (or name it in its parent's)", p)
		}
	}
}

var braces = regexp.MustCompile(`^(.*)\{([^}]*)\}(.*)$`)

// layoutPaths are the paths a layout cell names: its code spans, with "a/{b,c}" expanded; a span
// whose first element is not in the repository's top directory is relative to the parent of the
// cell's first path ("internal/daemon/cri", "heartbeat", "cri/critest").
func layoutPaths(c string) []string {
	var out []string
	base := ""
	for _, span := range codes(c) {
		for _, p := range expandBraces(span) {
			p = strings.TrimSuffix(p, "/")
			first, _, _ := strings.Cut(p, "/")
			if base != "" && !fileExists(filepath.Join(root, first)) {
				p = base + "/" + p
			}
			if base == "" {
				base = filepath.Dir(p)
			}
			out = append(out, p)
		}
	}
	return out
}

func expandBraces(s string) []string {
	m := braces.FindStringSubmatch(s)
	if m == nil {
		return []string{s}
	}
	var out []string
	for alt := range strings.SplitSeq(m[2], ",") {
		out = append(out, expandBraces(m[1]+alt+m[3])...)
	}
	return out
}

// goPackageDirs are the directories under the given top directories of root that hold Go files,
// testdata and the separate module test/bench (its own go.mod) left out.
func goPackageDirs(root string, tops ...string) ([]string, error) {
	seen := map[string]bool{}
	for _, top := range tops {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() {
				if d.Name() == "testdata" || rel != top && fileExists(filepath.Join(path, "go.mod")) {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(d.Name(), ".go") {
				seen[filepath.ToSlash(filepath.Dir(rel))] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
