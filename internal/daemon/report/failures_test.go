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

package report

import (
	"context"
	"errors"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// TestFailureTimes: each Failed state the writer reports is timed once per transition, with the
// in-memory (nanosecond) failure time, and only when the write of the node's report is
// acknowledged; failures older than the daemon are not new.
func TestFailureTimes(t *testing.T) {
	obj := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "node"}}
	var refuse bool
	fc := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(obj).WithStatusSubresource(obj).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object,
			p client.Patch, opts ...client.SubResourcePatchOption) error {
			if refuse {
				return errors.New("the apiserver is away")
			}
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		}}).Build()
	start := time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	cache := results.NewCache()
	w := &Writer{Client: fc, APIReader: fc, NodeName: "node", Results: cache, Failures: NewFailureTimes(clk)}
	w.SetPlan(&Plan{Generation: 1, Pods: []PlannedPod{plannedPod("p", "uid", "liveness", "app")}})
	k := results.Key{PodUID: "uid", Container: "app", Probe: "liveness"}
	ctx := context.Background()

	set := func(s appsv1alpha1.ProbeState, at time.Time) {
		t.Helper()
		cache.Set(k, s, "containerd://a", "", at, results.WriteSoon)
		if err := w.Flush(ctx); err != nil && !refuse {
			t.Fatal(err)
		}
	}
	observed := func() uint64 {
		m := &dto.Metric{}
		if err := FailureReportSeconds.Write(m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount()
	}
	n0 := observed()

	set(appsv1alpha1.ProbeFailed, start.Add(-time.Second)) // failed before the daemon started
	if got := observed() - n0; got != 0 {
		t.Fatalf("a failure older than the daemon was reported as new (%d)", got)
	}
	set(appsv1alpha1.ProbeSucceeded, start)
	failedAt := start.Add(1500 * time.Millisecond) // sub-second, as the worker records it
	clk.SetTime(failedAt.Add(120 * time.Millisecond))
	refuse = true
	set(appsv1alpha1.ProbeFailed, failedAt)
	if got := observed() - n0; got != 0 {
		t.Fatalf("a write the apiserver refused was timed (%d)", got)
	}
	refuse = false
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := observed() - n0; got != 1 {
		t.Fatalf("reports after the first failure = %d, want 1", got)
	}
	if k := (reportKey{"uid", "liveness"}); !w.Failures.written[k].Equal(failedAt) {
		t.Fatalf("written time %v, want the in-memory %v", w.Failures.written[k], failedAt)
	}
	writes := w.Writes()
	cache.Touch(k, failedAt.Add(time.Minute)) // a refresh of the same failure
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w.Writes() != writes+1 {
		t.Fatalf("the Failed result was not refreshed (%d writes, want %d)", w.Writes(), writes+1)
	}
	if got := observed() - n0; got != 1 {
		t.Fatalf("a refresh was reported again (%d reports)", got)
	}
	set(appsv1alpha1.ProbeSucceeded, failedAt.Add(time.Second))
	set(appsv1alpha1.ProbeFailed, failedAt.Add(2*time.Second))
	if got := observed() - n0; got != 2 {
		t.Fatalf("a new failure after a recovery: %d reports, want 2", got)
	}
}
