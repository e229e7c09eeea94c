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

package v1alpha1

import "testing"

func TestHoldReasonKind(t *testing.T) {
	want := map[HoldReason]HoldKind{
		HoldDaemonNotReporting: HoldKindDoubt,
		HoldDisabled:           HoldKindChoice,
		HoldShadow:             HoldKindChoice,
		HoldDryRun:             HoldKindChoice,
		HoldBlacklisted:        HoldKindChoice,
		HoldFailureStorm:       HoldKindDoubt,
		HoldNodeStorm:          HoldKindDoubt,
		HoldRestartIneffective: HoldKindDoubt,
		HoldMaxUnavailable:     HoldKindBudget,
		HoldRateLimited:        HoldKindBudget,
		"Unknown":              "",
	}
	for r, k := range want {
		if got := r.Kind(); got != k {
			t.Errorf("%s.Kind() = %q, want %q", r, got, k)
		}
	}
	// Every reason of the API has a kind.
	for _, r := range HoldReasons {
		if r.Kind() == "" {
			t.Errorf("hold reason %s has no kind", r)
		}
	}
}
