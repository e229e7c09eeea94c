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
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// A daemon is reporting while the manager sees its Lease renewed within leaseDurationSeconds of
// its own clock, whatever the node's clock says.
func TestDaemonReportingIgnoresTheNodeClock(t *testing.T) {
	for _, skew := range []time.Duration{0, 5 * time.Minute, -5 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			ctx := context.Background()
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: appsv1alpha1.DaemonLeasePrefix + "n1"},
				Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](40)}}
			cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(lease).Build()
			b := NewBuilder(cache, nil, Options{OperatorNamespace: "elo-system", Clock: clk})
			// The daemon renews every 10 s of its own clock, which is skew off the manager's.
			renew := func() {
				t.Helper()
				if err := cache.Get(ctx, client.ObjectKeyFromObject(lease), lease); err != nil {
					t.Fatal(err)
				}
				lease.Spec.RenewTime = &metav1.MicroTime{Time: clk.Now().Add(skew)}
				if err := cache.Update(ctx, lease); err != nil {
					t.Fatal(err)
				}
				b.ObserveLease(lease, false)
			}
			reporting := func() bool {
				t.Helper()
				d, err := b.Reader().daemon(ctx, "n1")
				if err != nil {
					t.Fatal(err)
				}
				return d.Reporting
			}
			for range 6 {
				renew()
				clk.Step(10 * time.Second)
				if !reporting() {
					t.Fatalf("renewed 10 s ago on the manager's clock: not reporting (node clock %s off)", skew)
				}
			}
			// The daemon stops: 30 s on it is still within its 40 s, 41 s on it is not.
			clk.Step(20 * time.Second)
			if !reporting() {
				t.Fatal("30 s after the last renewal: not reporting")
			}
			clk.Step(11 * time.Second)
			if reporting() {
				t.Fatalf("41 s after the last renewal: still reporting (node clock %s off)", skew)
			}
			// A Lease the watch delivered late, or a first look after a manager start, counts from
			// when it is seen.
			renew()
			if !reporting() {
				t.Fatal("a new renewal: not reporting")
			}
		})
	}
}
