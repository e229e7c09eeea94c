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
package heartbeat

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestRenewCreatesThenMovesRenewTime(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	h := &Heartbeat{Client: c, NodeName: "n1", Namespace: "ops", Clock: clk}
	if err := h.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	l := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: "ops", Name: appsv1alpha1.DaemonLeasePrefix + "n1"}
	if err := c.Get(ctx, key, l); err != nil {
		t.Fatal(err)
	}
	if *l.Spec.HolderIdentity != "n1" || *l.Spec.LeaseDurationSeconds != appsv1alpha1.DaemonLeaseDuration || !l.Spec.RenewTime.Time.Equal(clk.Now()) {
		t.Fatalf("lease spec %+v", l.Spec)
	}
	clk.Step(10 * time.Second)
	if err := h.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	_ = c.Get(ctx, key, l)
	if !l.Spec.RenewTime.Time.Equal(clk.Now()) {
		t.Errorf("renewTime %v, want %v", l.Spec.RenewTime, clk.Now())
	}
}

func TestRenewTakesOverAForeignHolder(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	old := metav1.NewMicroTime(clk.Now().Add(-time.Hour))
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: LeaseName("n1")},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("someone"), LeaseDurationSeconds: ptr.To[int32](5), RenewTime: &old},
	}).Build()
	h := &Heartbeat{Client: c, NodeName: "n1", Namespace: "ops", Clock: clk}
	if err := h.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	l := &coordinationv1.Lease{}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: LeaseName("n1")}, l)
	if *l.Spec.HolderIdentity != "n1" || *l.Spec.LeaseDurationSeconds != appsv1alpha1.DaemonLeaseDuration || !l.Spec.AcquireTime.Time.Equal(clk.Now()) {
		t.Errorf("lease spec %+v", l.Spec)
	}
}

func TestStartRenewsEveryInterval(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	h := &Heartbeat{Client: c, NodeName: "n1", Namespace: "ops", Clock: clk}
	done := make(chan error)
	go func() { done <- h.Start(ctx) }()
	key := client.ObjectKey{Namespace: "ops", Name: LeaseName("n1")}
	renewedAt := func() time.Time {
		l := &coordinationv1.Lease{}
		if err := c.Get(ctx, key, l); err != nil {
			return time.Time{}
		}
		return l.Spec.RenewTime.Time
	}
	waitUntil(t, func() bool { return renewedAt().Equal(clk.Now()) && clk.HasWaiters() })
	clk.Step(appsv1alpha1.DaemonLeaseRenewSeconds * time.Second)
	waitUntil(t, func() bool { return renewedAt().Equal(clk.Now()) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := (&Heartbeat{Client: c}).Start(ctx); err == nil {
		t.Error("a heartbeat without node name and namespace must not start")
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not met within 5s")
}

// Every daemon process marks its start in acquireTime once: the decision controller trusts only
// results taken after it.
func TestEachDaemonProcessWritesItsStartOnce(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	key := client.ObjectKey{Namespace: "ops", Name: appsv1alpha1.DaemonLeasePrefix + "n1"}
	acquired := func() time.Time {
		t.Helper()
		l := &coordinationv1.Lease{}
		if err := c.Get(ctx, key, l); err != nil {
			t.Fatal(err)
		}
		return l.Spec.AcquireTime.Time
	}
	first := &Heartbeat{Client: c, NodeName: "n1", Namespace: "ops", Clock: clk, Started: clk.Now()}
	if err := first.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Step(10 * time.Second)
	if err := first.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if got := acquired(); !got.Equal(first.Started) {
		t.Fatalf("acquireTime %v, want the first process's start %v", got, first.Started)
	}
	// The daemon restarts on the same node: same holder, new process.
	clk.Step(time.Minute)
	second := &Heartbeat{Client: c, NodeName: "n1", Namespace: "ops", Clock: clk, Started: clk.Now().Add(-2 * time.Second)}
	if err := second.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if got := acquired(); !got.Equal(second.Started) {
		t.Fatalf("acquireTime %v after a daemon restart, want %v", got, second.Started)
	}
	clk.Step(10 * time.Second)
	if err := second.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if got := acquired(); !got.Equal(second.Started) {
		t.Fatalf("acquireTime moved on a renewal: %v", got)
	}
}
