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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinksResolve: every relative link of README.md and docs/*.md names a file of the
// repository and, with a fragment, a heading of that page.
func TestLinksResolve(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	parsed := map[string]*page{}
	load := func(path string) *page {
		if p, ok := parsed[path]; ok {
			return p
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		parsed[path] = parsePage(path, string(b))
		return parsed[path]
	}
	for _, from := range pages {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(withoutCode(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := from
			if file != "" {
				path = filepath.Join(filepath.Dir(from), file)
			}
			rel, _ := filepath.Rel(root, from)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: no such file", rel, target)
				continue
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if p := load(path); p == nil || !p.anchors()[frag] {
				t.Errorf("%s: link %s: no heading with that anchor", rel, target)
			}
		}
	}
}

var fencedCode = regexp.MustCompile("(?s)```.*?```")

// withoutCode drops fenced code blocks, whose brackets are not links.
func withoutCode(s string) string { return fencedCode.ReplaceAllString(s, "") }
