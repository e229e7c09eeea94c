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

// Package truncate cuts messages (probe output, status messages, event notes) to the length an
// API field allows, without splitting a UTF-8 sequence.
package truncate

import (
	"strings"
	"unicode/utf8"
)

// MaxEventNoteBytes caps an event's note: events.k8s.io allows 1 KiB.
const MaxEventNoteBytes = 1024

// ellipsis marks a cut message.
const ellipsis = "..."

// String returns s as valid UTF-8 (invalid bytes replaced) of at most max bytes; a message that
// had to be cut ends with "..." so that a reader knows there was more.
func String(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	if max <= len(ellipsis) {
		return ellipsis[:max]
	}
	cut := max - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
