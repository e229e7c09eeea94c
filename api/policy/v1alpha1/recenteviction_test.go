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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRecentEvictionLastsAt(t *testing.T) {
	exp := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	e := RecentEviction{Expires: metav1.NewTime(exp)}
	for _, tc := range []struct {
		now  time.Time
		want bool
	}{
		{exp.Add(-time.Second), true},
		{exp, false},
		{exp.Add(time.Second), false},
	} {
		if got := e.LastsAt(tc.now); got != tc.want {
			t.Errorf("LastsAt(%s) = %v, want %v", tc.now, got, tc.want)
		}
	}
}
