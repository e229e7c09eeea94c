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
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The facts of one pod's failures, read from a cache: a Deployment of 3 on one node, whose pod
// web-0 fails on its running container, web-1 passes after a finished restart, and web-2 fails on
// a container it no longer runs (a stale result).
func TestFacts(t *testing.T) {
	ctx, now := context.Background(), time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	const ns, node = "shop", "n1"
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", UID: "d-web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1", UID: "rs-web-1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-web", Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3)}}
	var pods []*corev1.Pod
	for i, uid := range []types.UID{"uid-0", "uid-1", "uid-2"} {
		p := testutil.NewPod(ns, "web-"+string('0'+rune(i))).Enrolled().Labels(map[string]string{"app": "web"}).OnNode(node).
			ControlledBy("apps/v1", "ReplicaSet", rs.Name, rs.UID).Running("10.0.0.1").StartedAt(now.Add(-time.Minute)).
			With(func(p *corev1.Pod) { p.UID = uid; p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](45) }).Build()
		pods = append(pods, p)
	}
	at := metav1.NewTime(now.Add(-5 * time.Second))
	npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for i, p := range pods {
		withProbes(p, 5, "app")
		npp.Spec.PodProbes = append(npp.Spec.PodProbes, appsv1alpha1.PodProbe{Name: p.Name, Namespace: ns, UID: p.UID})
		state, id := appsv1alpha1.ProbeFailed, testutil.ContainerIDOf(p, "app", 1)
		switch i {
		case 1:
			state = appsv1alpha1.ProbeSucceeded
		case 2:
			id = testutil.ContainerIDOf(p, "app", 0)
		}
		s := appsv1alpha1.ContainerProbeState{Name: p.Name + "-app", ContainerID: id, State: state, LastProbeTime: at, LastTransitionTime: at}
		if state == appsv1alpha1.ProbeFailed {
			s.FailingSince = &at
		}
		rep.Status.PodProbeStatuses = append(rep.Status.PodProbeStatuses, appsv1alpha1.PodProbeStatus{Name: p.Name, Namespace: ns,
			UID: p.UID, ProbeStates: []appsv1alpha1.ContainerProbeState{s}})
	}
	finished := &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1-app-done",
		Labels: map[string]string{appsv1alpha1.LabelCRRPodUID: "uid-1"}},
		Status: appsv1alpha1.ContainerRecreateRequestStatus{Phase: appsv1alpha1.RecreateSucceeded}}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: appsv1alpha1.DaemonLeasePrefix + node},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now}, AcquireTime: &metav1.MicroTime{Time: now.Add(-time.Hour)}}}
	pol := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.EnhancedLivenessPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	objs := []client.Object{dep, rs, npp, rep, finished, lease, pol}
	for _, p := range pods {
		objs = append(objs, p)
	}
	cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(objs...).WithStatusSubresource(npp, rep).
		WithIndex(&corev1.Pod{}, managercache.PodByNode, managercache.PodNode).
		WithIndex(&corev1.Pod{}, managercache.ByController, managercache.ControllerUID).
		WithIndex(&appsv1.ReplicaSet{}, managercache.ByController, managercache.ControllerUID).
		WithIndex(&appsv1alpha1.ContainerRecreateRequest{}, managercache.CRRByPod, managercache.CRRPodUID).Build()
	// Any failing pod could make a node storm: the failing workloads are counted.
	settings := rules.Settings{RestartsEnabled: true, NodeStorm: rules.NodeStormRule{MaxFailing: intstr.FromInt32(0), MinWorkloads: 1}}
	b := NewBuilder(cache, NewWorkloads(cache, cache, cache, clocktesting.NewFakePassiveClock(now)), Options{Settings: settings,
		Default: rules.DefaultPolicy(rules.Defaults{}), OperatorNamespace: "elo-system", Clock: clocktesting.NewFakePassiveClock(now)})

	_, f, err := b.Facts(ctx, types.NamespacedName{Namespace: ns, Name: "web-0"})
	if err != nil {
		t.Fatal(err)
	}
	id := testutil.ContainerIDOf(pods[0], "app", 1)
	want := rules.Failure{Probe: "web-0-app", Container: "app", ContainerID: id, Running: id,
		Period: 5, Timeout: 1, Threshold: 3, Grace: 45, Request: RequestName(pods[0], "app", id)}
	if !f.Found || f.UID != "uid-0" || f.Settings != settings || len(f.Failures) != 1 {
		t.Fatalf("the pod and its failure: %+v", f)
	}
	got := f.Failures[0]
	if !got.ProbeTime.Equal(at.Time) || !got.Since.Equal(at.Time) {
		t.Fatalf("the result's times: %+v", got)
	}
	if got.ProbeTime, got.Since = (time.Time{}), (time.Time{}); got != want {
		t.Fatalf("the failure: %+v, want %+v", got, want)
	}
	if !f.Daemon.Reporting || !f.Daemon.Started.Equal(now.Add(-time.Hour)) || len(f.Policies) != 1 || f.Policies[0].Key.Name != "web" {
		t.Fatalf("daemon %+v, policies %v", f.Daemon, f.Policies)
	}
	w := f.Workload
	if w.Ref.Kind != "Deployment" || w.Ref.Name != "web" || w.Desired != 3 || len(w.Pods) != 3 || w.FailingPods() != 2 ||
		w.Revision != "ReplicaSet/web-1" || f.Self.UID != "uid-0" || !f.Self.Failing {
		t.Fatalf("workload %+v, self %+v", w, f.Self)
	}
	if i := slices.IndexFunc(w.Pods, func(p rules.PodState) bool { return p.UID == "uid-1" }); i < 0 ||
		!slices.Equal(w.Pods[i].Finished, []string{finished.Name}) || !w.Pods[i].Healthy {
		t.Fatalf("web-1 is healthy after a finished request: %+v", w.Pods)
	}
	if f.Node != (rules.NodeState{Name: node, Pods: 3, FailingPods: 2, FailingWorkloads: 1}) {
		t.Fatalf("node %+v", f.Node)
	}
	if len(f.Refailures) != 1 || f.Refailures[0].Pod != "uid-0" || !f.Refailures[0].Started.Equal(now.Add(-time.Minute)) {
		t.Fatalf("refailures: the containers running now, failed: %+v", f.Refailures)
	}
	if k, ok := b.workloads.Of("uid-0"); !ok || k.Name != "web" {
		t.Fatal("the decision's workloads are learned for the watches")
	}

	// Scaled to 0 while web-0 still exists: desired is never 0 while the pod exists.
	dep.Spec.Replicas = ptr.To[int32](0)
	if err := cache.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	scaled := NewBuilder(cache, NewWorkloads(cache, cache, cache, clocktesting.NewFakePassiveClock(now)), Options{Settings: settings,
		Default: rules.DefaultPolicy(rules.Defaults{}), OperatorNamespace: "elo-system", Clock: clocktesting.NewFakePassiveClock(now)})
	if _, f, err := scaled.Facts(ctx, types.NamespacedName{Namespace: ns, Name: "web-0"}); err != nil || f.Workload.Desired != 1 {
		t.Fatalf("scaled to 0: desired %d, %v; want 1", f.Workload.Desired, err)
	}

	// A stale result alone: nothing more is read.
	if _, f, err = b.Facts(ctx, types.NamespacedName{Namespace: ns, Name: "web-2"}); err != nil || len(f.Failures) != 1 ||
		f.Failures[0].Running == f.Failures[0].ContainerID || f.Daemon.Reporting || f.Policies != nil || f.Workload.Pods != nil {
		t.Fatalf("stale: %+v %v", f, err)
	}
	// A pod that is gone.
	if pod, f, err := b.Facts(ctx, types.NamespacedName{Namespace: ns, Name: "gone"}); err != nil || pod != nil || f.Found || len(f.Failures) != 0 {
		t.Fatalf("gone: %+v %v", f, err)
	}
}

func TestRequestNameIsDeterministicAndValid(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-7d9c-abcde", UID: "uid-1"}}
	a := RequestName(pod, "app", "containerd://1")
	if a != RequestName(pod, "app", "containerd://1") {
		t.Fatal("same instance, different names")
	}
	others := []string{
		RequestName(pod, "app", "containerd://2"),
		RequestName(pod, "sidecar", "containerd://1"),
		RequestName(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: "uid-2"}}, "app", "containerd://1"),
	}
	for _, o := range others {
		if o == a {
			t.Fatalf("different instance, same name %s", a)
		}
	}
	long := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 250) + ".b-", UID: "u"}}
	for _, n := range append(others, a, RequestName(long, strings.Repeat("c", 63), "containerd://x")) {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("%q: %v", n, errs)
		}
	}
}

// A finished request gives its pod back only once the containers it stopped run again, as new
// instances, and are ready.
func TestIsRecovering(t *testing.T) {
	pod := testutil.NewPod("ns", "p").Containers("app", "side").Running("10.0.0.1").Build()
	old := testutil.ContainerIDOf(pod, "app", 1)
	killed := func(id string) []appsv1alpha1.ContainerRecreateState {
		return []appsv1alpha1.ContainerRecreateState{{Name: "app", Phase: appsv1alpha1.RecreateSucceeded, IsKilled: true, ContainerID: id}}
	}
	for _, tc := range []struct {
		name   string
		states []appsv1alpha1.ContainerRecreateState
		pod    func(*corev1.Pod)
		want   bool
	}{
		{"nothing stopped", []appsv1alpha1.ContainerRecreateState{{Name: "app", Phase: appsv1alpha1.RecreateFailed}}, nil, false},
		{"the stopped instance still runs", killed(old), nil, true},
		{"replaced and ready", killed("containerd://older"), nil, false},
		{"replaced, not ready", killed("containerd://older"), func(p *corev1.Pod) { p.Status.ContainerStatuses[0].Ready = false }, true},
		{"replaced, not running", killed("containerd://older"), func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}, true},
		{"the container is gone from the status", killed("containerd://older"), func(p *corev1.Pod) { p.Status.ContainerStatuses = p.Status.ContainerStatuses[1:] }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.DeepCopy()
			if tc.pod != nil {
				tc.pod(p)
			}
			crr := &appsv1alpha1.ContainerRecreateRequest{Status: appsv1alpha1.ContainerRecreateRequestStatus{
				Phase: appsv1alpha1.RecreateSucceeded, ContainerRecreateStates: tc.states}}
			if got := isRecovering(crr, p); got != tc.want {
				t.Fatalf("isRecovering = %v, want %v", got, tc.want)
			}
		})
	}
}
