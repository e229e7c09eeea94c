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
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// A node storm is a correlated onset: another tenant's pods failing for an hour do not make our
// pod's new hang a node storm; pods that all started failing together still do.
func TestNodeStormIsACorrelatedOnset(t *testing.T) {
	for _, tc := range []struct {
		name         string
		theirsBegan  time.Duration // before now
		wantFailing  int32
		wantWorkload int32
	}{
		{"their pods fail for good since an hour", time.Hour, 1, 0},
		{"every pod of the node started failing together", 2 * time.Minute, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, now := context.Background(), time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
			const node = "n1"
			var pods []*corev1.Pod
			for i := range 3 {
				pods = append(pods, testutil.NewPod("theirs", fmt.Sprint("broken-", i)).Enrolled().OnNode(node).Running("10.0.0.1").
					With(func(p *corev1.Pod) { p.UID = types.UID(fmt.Sprint("theirs-", i)) }).Build())
			}
			ours := testutil.NewPod("ours", "hung").Enrolled().OnNode(node).Running("10.0.0.2").
				With(func(p *corev1.Pod) { p.UID = "ours" }).Build()
			pods = append(pods, ours)
			npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
			rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
			for _, p := range pods {
				began := metav1.NewTime(now.Add(-tc.theirsBegan))
				if p == ours {
					began = metav1.NewTime(now.Add(-30 * time.Second))
				}
				withProbes(p, 0, "app")
				npp.Spec.PodProbes = append(npp.Spec.PodProbes, appsv1alpha1.PodProbe{Name: p.Name, Namespace: p.Namespace, UID: p.UID})
				rep.Status.PodProbeStatuses = append(rep.Status.PodProbeStatuses, appsv1alpha1.PodProbeStatus{Name: p.Name,
					Namespace: p.Namespace, UID: p.UID, ProbeStates: []appsv1alpha1.ContainerProbeState{{Name: p.Name + "-app",
						ContainerID: testutil.ContainerIDOf(p, "app", 1), State: appsv1alpha1.ProbeFailed,
						LastProbeTime: metav1.NewTime(now), LastTransitionTime: began, FailingSince: &began}}})
			}
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: appsv1alpha1.DaemonLeasePrefix + node},
				Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now}, AcquireTime: &metav1.MicroTime{Time: now.Add(-2 * time.Hour)}}}
			objs := []client.Object{npp, rep, lease}
			for _, p := range pods {
				objs = append(objs, p)
			}
			cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(objs...).WithStatusSubresource(npp, rep).
				WithIndex(&corev1.Pod{}, managercache.PodByNode, managercache.PodNode).
				WithIndex(&corev1.Pod{}, managercache.ByController, managercache.ControllerUID).
				WithIndex(&appsv1alpha1.ContainerRecreateRequest{}, managercache.CRRByPod, managercache.CRRPodUID).Build()
			clk := clocktesting.NewFakePassiveClock(now)
			settings := rules.Settings{RestartsEnabled: true, NodeStorm: rules.NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 3}}
			b := NewBuilder(cache, NewWorkloads(cache, cache, cache, clk), Options{Settings: settings,
				Default: rules.DefaultPolicy(rules.Defaults{}), OperatorNamespace: "elo-system", Clock: clk})
			_, f, err := b.Facts(ctx, types.NamespacedName{Namespace: "ours", Name: "hung"})
			if err != nil {
				t.Fatal(err)
			}
			if f.Node.Pods != 4 || f.Node.FailingPods != tc.wantFailing || f.Node.FailingWorkloads != tc.wantWorkload {
				t.Fatalf("node %+v, want %d failing in %d workloads", f.Node, tc.wantFailing, tc.wantWorkload)
			}
		})
	}
}

func TestUncorrelated(t *testing.T) {
	onset := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		since, onset time.Time
		want         bool
	}{
		{onset.Add(-time.Hour), onset, true},
		{onset.Add(-rules.StormCorrelation), onset, false},
		{onset.Add(time.Minute), onset, false},
		{time.Time{}, onset, false},
		{onset.Add(-time.Hour), time.Time{}, false},
	} {
		if got := rules.Uncorrelated(tc.since, tc.onset); got != tc.want {
			t.Errorf("Uncorrelated(%s, %s) = %v, want %v", tc.since, tc.onset, got, tc.want)
		}
	}
}
