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

package v1

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// status.recentEvictions are written on the API server's clock, by whichever replica leads, and
// judged on this replica's: a replica whose clock is 2 h behind the API server's does not steer
// by an entry whose window has passed on the API server's clock (it would for 2 h more); an
// entry that lies 2 h in the future of the API server's clock (a replica 2 h ahead wrote it) is
// taken as written now, and the clamp is counted.
func TestSteeringJudgesEvictionsOnTheAPIServersClock(t *testing.T) {
	local := time.Now()
	apiNow := local.Add(2 * time.Hour)
	clk := apiclock.New(nil)
	clk.Observe(local, local.Add(20*time.Millisecond), apiNow)
	entry := func(owner, node string, at time.Time) policyv1alpha1.RecentEviction {
		return policyv1alpha1.RecentEviction{Pod: owner + "-x", PodUID: types.UID("uid-" + owner + "-x"), OwnerKind: "ReplicaSet",
			OwnerName: owner, Node: node, Container: "web", Time: metav1.NewTime(at), Expires: metav1.NewTime(at.Add(10 * time.Minute))}
	}
	pol := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "move"},
		Status: policyv1alpha1.EnhancedLivenessPolicyStatus{RecentEvictions: []policyv1alpha1.RecentEviction{
			entry("web-1", "node-a", apiNow.Add(-11*time.Minute)), // lapsed a minute ago, on the API server's clock
			entry("web-2", "node-b", apiNow.Add(2*time.Hour)),     // 2 h in the API server's future
		}}}
	d := &PodDefaulter{OperatorNamespace: "operator", Keys: testutil.StaticKeys{}, Clock: clk,
		Policies: fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(pol).Build()}
	admit := func(owner string) *corev1.Pod {
		t.Helper()
		pod := appPod("shop", "", optIn())
		pod.GenerateName = owner + "-"
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner,
			UID: types.UID("uid-" + owner), Controller: ptr.To(true)}}
		if err := d.Default(context.WithValue(context.Background(), warningsKey{}, &warningList{}), pod); err != nil {
			t.Fatal(err)
		}
		if pod.Labels[appsv1alpha1.LabelEnrolled] != appsv1alpha1.TrueValue {
			t.Fatalf("the pod of %s was not enrolled", owner)
		}
		return pod
	}

	if got, ok := admit("web-1").Annotations[appsv1alpha1.AnnotationAvoidedNodes]; ok {
		t.Errorf("a pod of web-1 is steered away from %s by an eviction whose window passed on the API server's clock", got)
	}
	before := clampedTotal(t, "EnhancedLivenessPolicy")
	if got := admit("web-2").Annotations[appsv1alpha1.AnnotationAvoidedNodes]; got != "node-b" {
		t.Errorf("a pod of web-2 steered away from %q; want node-b: an eviction 2 h ahead is taken as now, and lasts its window", got)
	}
	if n := clampedTotal(t, "EnhancedLivenessPolicy") - before; n != 1 {
		t.Errorf("enhanced_liveness_future_timestamps_clamped_total{object=%q} rose by %v, want 1", "EnhancedLivenessPolicy", n)
	}
}

// clampedTotal reads enhanced_liveness_future_timestamps_clamped_total{object} from the manager's
// registry.
func clampedTotal(t *testing.T, object string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "enhanced_liveness_future_timestamps_clamped_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "object" && l.GetValue() == object {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
