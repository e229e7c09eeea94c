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

package probecontext

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzDecode checks that the decoder never panics, that whatever it accepts re-encodes and
// decodes to the same value, and that validation and resolution of accepted probes never panic.
// Seeds live in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`[{"name":"web","livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, errs := Decode(data, annPath)
		if len(errs) > 0 {
			if entries != nil {
				t.Fatalf("entries returned with errors: %v", errs.ToAggregate())
			}
			return
		}
		ctr := &corev1.Container{Name: "web", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}}
		for i := range entries {
			p := entries[i].LivenessProbe.DeepCopy()
			SetDefaults(p)
			_ = ValidateLiveness(p, ctr, annPath.Index(i))
			_, _ = Resolve(p, ctr)
		}
		s, err := Encode(entries)
		if err != nil {
			// Re-encoding can only grow past the limit through escaping; that is not a decoder bug.
			return
		}
		again, errs := Decode([]byte(s), annPath)
		if len(errs) > 0 {
			t.Fatalf("re-decoding %q: %v", s, errs.ToAggregate())
		}
		s2, _ := Encode(again)
		if s != s2 {
			t.Fatalf("round trip not stable:\n%s\n%s", s, s2)
		}
	})
}
