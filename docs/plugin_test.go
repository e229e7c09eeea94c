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
	"strings"
	"testing"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/plugin/explain"
)

// `kubectl enhancedliveness explain` says what ends a hold in the reference's words: each hold
// reason's "ends when" cell is the plugin's, word for word.
func TestPluginSaysWhatEndsAHoldAsTheReferenceDoes(t *testing.T) {
	rows := mustRows(t, readPage(t, "docs/reference.md"), secHoldReasons)
	seen := map[policyv1alpha1.HoldReason]bool{}
	for _, row := range rows {
		r := policyv1alpha1.HoldReason(strings.Trim(cell(row, 0), "`"))
		want, ok := explain.EndsWhen[r]
		if !ok {
			continue
		}
		seen[r] = true
		if got := cell(row, 4); got != want {
			t.Errorf("hold reason %s: reference.md says it ends when\n  %s\nthe plugin says\n  %s", r, got, want)
		}
	}
	for _, r := range policyv1alpha1.HoldReasons {
		if _, ok := explain.EndsWhen[r]; !ok {
			t.Errorf("hold reason %s: the plugin does not say what ends it (explain.EndsWhen)", r)
		}
		if !seen[r] {
			t.Errorf("hold reason %s: no row in reference.md's hold reasons table", r)
		}
	}
}
