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

package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDefaultHTTPGet(t *testing.T) {
	for _, c := range []struct {
		name    string
		in, out corev1.HTTPGetAction
	}{
		{"unset: path / and scheme HTTP", corev1.HTTPGetAction{}, corev1.HTTPGetAction{Path: "/", Scheme: corev1.URISchemeHTTP}},
		{"set: kept", corev1.HTTPGetAction{Path: "/healthz", Scheme: corev1.URISchemeHTTPS},
			corev1.HTTPGetAction{Path: "/healthz", Scheme: corev1.URISchemeHTTPS}},
	} {
		a := c.in
		DefaultHTTPGet(&a)
		if a.Path != c.out.Path || a.Scheme != c.out.Scheme {
			t.Errorf("%s: got %+v, want %+v", c.name, a, c.out)
		}
	}
}
