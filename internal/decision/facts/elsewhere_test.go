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

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// How a workload fares on the other nodes, for the node condition: a Deployment with a pod on
// each of five nodes. n1 is the pod's own; n2 passes, n3 fails, n4 has started to fail (suspect),
// and n5's daemon has no Lease, so its passing pod vouches for nothing.
func TestElsewhere(t *testing.T) {
	ctx, now := context.Background(), time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	const ns = "shop"
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", UID: "d-web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](5)}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1", UID: "rs-web-1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-web", Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](5)}}
	objs := []client.Object{dep, rs,
		// Not a daemon's Lease: not counted.
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: "bcbe718c.enhancedliveness.io"},
			Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now}}}}
	var status []client.Object
	at := metav1.NewTime(now.Add(-5 * time.Second))
	for i, state := range []string{"failed", "passed", "failed", "suspect", "passed"} {
		node := "n" + string(rune('1'+i))
		p := testutil.NewPod(ns, "web-"+node).Enrolled().OnNode(node).ControlledBy("apps/v1", "ReplicaSet", rs.Name, rs.UID).
			Running("10.0.0.1").StartedAt(now.Add(-time.Minute)).With(func(p *corev1.Pod) { p.UID = types.UID("uid-" + node) }).Build()
		withProbes(p, 5, "app")
		s := appsv1alpha1.ContainerProbeState{Name: p.Name + "-app", ContainerID: testutil.ContainerIDOf(p, "app", 1),
			State: appsv1alpha1.ProbeSucceeded, LastProbeTime: at, LastTransitionTime: at}
		switch state {
		case "failed":
			s.State, s.FailingSince = appsv1alpha1.ProbeFailed, &at
		case "suspect":
			s.FailingSince = &at
		}
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node},
			Spec: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{{Name: p.Name, Namespace: ns, UID: p.UID}}}}
		rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
		rep.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{{Name: p.Name, Namespace: ns, UID: p.UID,
			ProbeStates: []appsv1alpha1.ContainerProbeState{s}}}
		objs = append(objs, p, npp, rep)
		status = append(status, npp, rep)
		if node != "n5" {
			objs = append(objs, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: appsv1alpha1.DaemonLeasePrefix + node},
				Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now}, AcquireTime: &metav1.MicroTime{Time: now.Add(-time.Hour)}}})
		}
	}
	cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(objs...).WithStatusSubresource(status...).
		WithIndex(&corev1.Pod{}, managercache.PodByNode, managercache.PodNode).
		WithIndex(&corev1.Pod{}, managercache.ByController, managercache.ControllerUID).
		WithIndex(&appsv1.ReplicaSet{}, managercache.ByController, managercache.ControllerUID).
		WithIndex(&appsv1alpha1.ContainerRecreateRequest{}, managercache.CRRByPod, managercache.CRRPodUID).Build()
	clock := clocktesting.NewFakePassiveClock(now)
	b := NewBuilder(cache, NewWorkloads(cache, cache, cache, clock), Options{Default: rules.DefaultPolicy(rules.Defaults{}),
		OperatorNamespace: "elo-system", Clock: clock})

	r := b.Reader()
	node, s, err := r.Elsewhere(ctx, types.NamespacedName{Namespace: ns, Name: "web-n1"}, "app")
	if err != nil || node != "n1" || s != (Spread{Passing: 1, Failing: 2}) {
		t.Fatalf("Elsewhere(web-n1) = %s, %+v, %v; want n1, 1 passing (n2), 2 failing (n3 failed, n4 suspect)", node, s, err)
	}
	if node, s, err := r.Elsewhere(ctx, types.NamespacedName{Namespace: ns, Name: "web-n2"}, "app"); err != nil || node != "n2" ||
		s != (Spread{Passing: 0, Failing: 3, Passes: true}) {
		t.Fatalf("Elsewhere(web-n2) = %s, %+v, %v; want n2, none passing, 3 failing, its own passing", node, s, err)
	}
	if _, s, err := r.Elsewhere(ctx, types.NamespacedName{Namespace: ns, Name: "web-n1"}, "sidecar"); err != nil || s != (Spread{}) {
		t.Fatalf("another container: %+v, %v; want nothing", s, err)
	}
	if node, s, err := r.Elsewhere(ctx, types.NamespacedName{Namespace: ns, Name: "gone"}, "app"); err != nil || node != "" || s != (Spread{}) {
		t.Fatalf("a pod that is gone: %q, %+v, %v", node, s, err)
	}
	if n, err := r.ReportingDaemons(ctx); err != nil || n != 4 {
		t.Fatalf("ReportingDaemons = %d, %v; want 4 (n1-n4: n5 has no Lease, the leader's Lease is no daemon's)", n, err)
	}
}
