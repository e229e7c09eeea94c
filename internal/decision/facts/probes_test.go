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

package facts

import (
	"testing"

	"k8s.io/utils/clock"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// A pod's probes are decoded once: later reads of the pod, or of a new copy of it from the cache,
// share the first decoding while its probe context is the same; another context, or the pod
// deleted and read again, decodes anew.
func TestPodProbesDecodesEachContextOnce(t *testing.T) {
	c := newPodProbes()
	pod := withProbes(testutil.NewPod("ns", "web").Build(), 5, "app")
	first := c.of(pod)
	if len(first) != 1 || first[0].Container != "app" || first[0].Probe.PeriodSeconds != 5 {
		t.Fatalf("probes %+v, want app's with period 5", first)
	}
	if again := c.of(pod.DeepCopy()); &again[0] != &first[0] {
		t.Error("a copy of the pod with the same probe context was decoded again")
	}

	changed := withProbes(pod.DeepCopy(), 7, "app", "side")
	got := c.of(changed)
	if len(got) != 2 || got[0].Probe.PeriodSeconds != 7 {
		t.Fatalf("after the context changed: probes %+v, want app and side with period 7", got)
	}
	if c.len() != 1 {
		t.Errorf("%d pods kept, want 1 (an entry per pod UID)", c.len())
	}

	b := NewBuilder(nil, nil, Options{Clock: clock.RealClock{}})
	b.decoded.of(changed)
	b.ForgetPod(changed)
	if n := b.decoded.len(); n != 0 {
		t.Errorf("%d pods kept after the pod was deleted, want 0", n)
	}

	var none *podProbes
	if a, b := none.of(pod), none.of(pod); len(a) != 1 || &a[0] == &b[0] {
		t.Error("without a cache each read must decode the pod's context")
	}
}

// BenchmarkNodeReportProbes is what a decision pays per sibling for its probes, decoded on every
// read (nil podProbes, as before) and kept.
func BenchmarkNodeReportProbes(b *testing.B) {
	pod := withProbes(testutil.NewPod("ns", "web").Build(), 5, "app", "side")
	for _, bc := range []struct {
		name string
		c    *podProbes
	}{{"decoded each read", nil}, {"kept", newPodProbes()}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = bc.c.of(pod)
			}
		})
	}
}
