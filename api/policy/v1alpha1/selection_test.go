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

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSelects(t *testing.T) {
	web := map[string]string{"tier": "web", "app": "shop"}
	tests := []struct {
		name     string
		selector *metav1.LabelSelector
		labels   map[string]string
		want     bool
		wantErr  string
	}{
		{name: "unset selects all", selector: nil, labels: web, want: true},
		{name: "empty selects all", selector: &metav1.LabelSelector{}, labels: nil, want: true},
		{name: "matchLabels match", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}, labels: web, want: true},
		{name: "matchLabels miss", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}, labels: web, want: false},
		{name: "expression NotIn", selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"shop"}}}}, labels: web, want: false},
		{name: "bad operator", selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: "Near"}}}, labels: web, wantErr: "spec.selector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &EnhancedLivenessPolicy{Spec: EnhancedLivenessPolicySpec{Selector: tt.selector}}
			got, err := p.Selects(tt.labels)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error containing %q, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Selects = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
