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

package wiring

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// TestFailureReports: each Failed state is reported once per transition, with the in-memory
// (nanosecond) failure time, and only when the write of the node's report is acknowledged;
// failures older than the daemon are not new.
func TestFailureReports(t *testing.T) {
	obj := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "node"}}
	fc := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(obj).WithStatusSubresource(obj).Build()
	start := time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	r := newFailureReports(clk)
	c := reportingClient{Client: fc, reports: r}
	ctx := context.Background()

	write := func(states ...appsv1alpha1.ContainerProbeState) {
		t.Helper()
		cur := &appsv1alpha1.NodePodProbeReport{}
		if err := fc.Get(ctx, client.ObjectKey{Name: "node"}, cur); err != nil {
			t.Fatal(err)
		}
		base := cur.DeepCopy()
		cur.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{{Name: "p", Namespace: "ns", UID: "uid", ProbeStates: states}}
		if err := c.Status().Patch(ctx, cur, client.MergeFrom(base)); err != nil {
			t.Fatal(err)
		}
	}
	state := func(s appsv1alpha1.ProbeState, at time.Time) appsv1alpha1.ContainerProbeState {
		return appsv1alpha1.ContainerProbeState{Name: "liveness", ContainerID: "containerd://a", State: s,
			LastProbeTime: metav1.NewTime(at), LastTransitionTime: metav1.NewTime(at)}
	}
	observed := func() uint64 {
		m := &dto.Metric{}
		if err := FailureReportSeconds.Write(m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount()
	}
	n0 := observed()

	write(state(appsv1alpha1.ProbeFailed, start.Add(-time.Second))) // failed before the daemon started
	if got := observed() - n0; got != 0 {
		t.Fatalf("a failure older than the daemon was reported as new (%d)", got)
	}
	failedAt := start.Add(1500 * time.Millisecond) // sub-second, as the worker records it
	clk.SetTime(failedAt.Add(120 * time.Millisecond))
	write(state(appsv1alpha1.ProbeFailed, failedAt))
	if got := observed() - n0; got != 1 {
		t.Fatalf("reports after the first failure = %d, want 1", got)
	}
	if k := (reportKey{"uid", "liveness"}); !r.written[k].Equal(failedAt) {
		t.Fatalf("written time %v, want the in-memory %v", r.written[k], failedAt)
	}
	write(state(appsv1alpha1.ProbeFailed, failedAt)) // a refresh of the same failure
	if got := observed() - n0; got != 1 {
		t.Fatalf("a refresh was reported again (%d reports)", got)
	}
	write(state(appsv1alpha1.ProbeSucceeded, failedAt.Add(time.Second)))
	write(state(appsv1alpha1.ProbeFailed, failedAt.Add(2*time.Second)))
	if got := observed() - n0; got != 2 {
		t.Fatalf("a new failure after a recovery: %d reports, want 2", got)
	}
}
