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

package gate

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	eltestutil "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// BenchmarkGateFilter is the daemon's cost of one re-sync of a full node (110 pods, 2 probes
// each): first with every seal verified (a daemon start), then with the seals remembered (every
// later pod event).
func BenchmarkGateFilter(b *testing.B) {
	var entries []appsv1alpha1.PodProbe
	pods := map[types.UID]*corev1.Pod{}
	for i := range 110 {
		p := sealedPod(types.UID(fmt.Sprintf("uid-%d", i)))
		entries = append(entries, entryOf(p))
		pods[p.UID] = p
	}
	keys := eltestutil.TrustedKeys()
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			g := &Gate{}
			if out, _ := g.Filter(entries, pods, keys); len(out) != 110 {
				b.Fatalf("passed %d entries", len(out))
			}
		}
	})
	b.Run("remembered", func(b *testing.B) {
		g := &Gate{}
		g.Filter(entries, pods, keys)
		for b.Loop() {
			if out, _ := g.Filter(entries, pods, keys); len(out) != 110 {
				b.Fatalf("passed %d entries", len(out))
			}
		}
	})
}
