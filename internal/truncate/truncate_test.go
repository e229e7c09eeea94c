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

package truncate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"short", "probe failed", 20, "probe failed"},
		{"exact", "abcde", 5, "abcde"},
		{"cut", "abcdefghij", 8, "abcde..."},
		{"cut before a multi-byte rune", "abcdé", 5, "ab..."},
		{"cut inside a rune keeps it whole or drops it", "aéééé", 7, "aé..."},
		{"invalid bytes replaced", "a\xffb", 10, "a\uFFFDb"},
		{"tiny max", "abcdef", 2, ".."},
		{"zero max", "abcdef", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := String(tc.in, tc.max)
			if got != tc.want {
				t.Fatalf("String(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
			if len(got) > tc.max || !utf8.ValidString(got) {
				t.Fatalf("String(%q, %d) = %q: %d bytes, valid UTF-8 %v", tc.in, tc.max, got, len(got), utf8.ValidString(got))
			}
		})
	}
}

func FuzzString(f *testing.F) {
	f.Add(strings.Repeat("é", 600), 1024)
	f.Add("a\xff\xfe", 2)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		got := String(s, max)
		if len(got) > max || !utf8.ValidString(got) {
			t.Fatalf("String(%q, %d) = %q", s, max, got)
		}
	})
}
