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
	"fmt"
	"regexp"
	"strings"
)

// page is a Markdown page cut into its level-2 sections.
type page struct {
	name     string
	sections map[string]*section
	headings []string // every heading, in order, as written
}

// section is the text under one "## " heading, up to the next one.
type section struct {
	rows [][]string // table rows (header and separator rows left out), cells trimmed
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// codes are the code spans of a cell, e.g. the flag names of "`--a`, `--b`".
func codes(cell string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

func parsePage(name, text string) *page {
	p := &page{name: name, sections: map[string]*section{}}
	var cur *section
	inFence := false
	header := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if h, ok := strings.CutPrefix(line, "#"); ok && strings.HasPrefix(strings.TrimLeft(h, "#"), " ") {
			title := strings.TrimSpace(strings.TrimLeft(h, "#"))
			p.headings = append(p.headings, title)
			if strings.HasPrefix(line, "## ") {
				cur = &section{}
				p.sections[title] = cur
			}
			continue
		}
		if !strings.HasPrefix(line, "|") {
			header = true // the next table row is a header
			continue
		}
		cells := splitRow(line)
		if header || isSeparator(cells) {
			header = false
			continue
		}
		if cur != nil {
			cur.rows = append(cur.rows, cells)
		}
	}
	return p
}

// rows are the table rows of a section; a missing section is an error of the page.
func (p *page) rows(title string) ([][]string, error) {
	s, ok := p.sections[title]
	if !ok {
		return nil, fmt.Errorf("%s has no section %q", p.name, title)
	}
	return s.rows, nil
}

// splitRow cuts a table row into cells at the pipes outside code spans.
func splitRow(line string) []string {
	var cells []string
	var b strings.Builder
	inCode := false
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '`':
			inCode = !inCode
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteByte('|')
			i++
			continue
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
			continue
		}
		b.WriteByte(c)
	}
	return append(cells, strings.TrimSpace(b.String()))
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":-") != "" {
			return false
		}
	}
	return true
}

// anchor is the fragment a heading gets on a rendered page: lower case, punctuation other than
// '-' and '_' dropped, spaces turned into '-'.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && isLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isLetter(r rune) bool {
	return strings.ContainsRune("àáâäçèéêëìíîïñòóôöùúûü", r)
}

// anchors are the fragments of every heading of a page, numbered as duplicates are.
func (p *page) anchors() map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, h := range p.headings {
		a := anchor(h)
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}
