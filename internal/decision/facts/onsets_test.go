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
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// probeStatus is one pod's status with one probe "app" on container instance id in state (a
// suspect: Unknown with failingSince).
// withProbes gives the named containers of p (created when p lacks them) an exec liveness probe
// of period periodSeconds in the pod's probe context, as the pod webhook writes it: the decision
// reads a pod's probes there.
func withProbes(p *corev1.Pod, periodSeconds int32, containers ...string) *corev1.Pod {
	var entries []probecontext.ContainerProbe
	for _, c := range containers {
		if !slices.ContainsFunc(p.Spec.Containers, func(x corev1.Container) bool { return x.Name == c }) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		entries = append(entries, probecontext.ContainerProbe{Name: c, LivenessProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: periodSeconds}})
	}
	value, err := probecontext.Encode(entries)
	if err != nil {
		panic(err)
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[appsv1alpha1.AnnotationProbeContext] = value
	return p
}

func probeStatus(uid types.UID, id string, state appsv1alpha1.ProbeState, failing bool) appsv1alpha1.PodProbeStatus {
	s := appsv1alpha1.ContainerProbeState{Name: "app", ContainerID: id, State: state}
	if failing {
		since := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) // the node's clock: never read
		s.FailingSince = &since
	}
	return appsv1alpha1.PodProbeStatus{Name: string(uid), Namespace: "ns", UID: uid, ProbeStates: []appsv1alpha1.ContainerProbeState{s}}
}

func onsetStatus(ps ...appsv1alpha1.PodProbeStatus) *appsv1alpha1.ProbeResults {
	return &appsv1alpha1.ProbeResults{PodProbeStatuses: ps}
}

// The first sighting of each failing container instance, on the manager's clock, and what makes
// it forgotten.
func TestOnsets(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	o := newOnsets(clk)
	failedA := probeStatus("a", "containerd://a1", appsv1alpha1.ProbeFailed, true)
	suspectB := probeStatus("b", "containerd://b1", appsv1alpha1.ProbeUnknown, true)
	passingC := probeStatus("c", "containerd://c1", appsv1alpha1.ProbeSucceeded, false)
	onsetOf := func(ps appsv1alpha1.PodProbeStatus) time.Time { return o.onset("n1", &ps) }
	entries := func() int {
		n := 0
		for _, pods := range o.byNode {
			for _, insts := range pods {
				n += len(insts)
			}
		}
		return n
	}

	o.observe("n1", onsetStatus(failedA, suspectB, passingC))
	if entries() != 2 {
		t.Fatalf("a failing and a suspect instance are tracked, a passing one is not: %d entries", entries())
	}
	clk.Step(20 * time.Minute)
	o.observe("n1", onsetStatus(failedA, suspectB, passingC))
	if got := onsetOf(failedA); !got.Equal(t0) {
		t.Errorf("a failing instance seen again keeps its first sighting: %s", got)
	}
	if got := onsetOf(suspectB); !got.Equal(t0) {
		t.Errorf("a suspect keeps its first sighting: %s", got)
	}
	if got := onsetOf(passingC); !got.IsZero() {
		t.Errorf("a passing pod has no onset: %s", got)
	}

	// b's suspect turns Failed (same instance): the same onset. a's container is restarted: a new
	// instance, a new onset. c starts failing.
	t1 := clk.Now()
	failedB := probeStatus("b", "containerd://b1", appsv1alpha1.ProbeFailed, true)
	restartedA := probeStatus("a", "containerd://a2", appsv1alpha1.ProbeFailed, true)
	failedC := probeStatus("c", "containerd://c1", appsv1alpha1.ProbeFailed, true)
	o.observe("n1", onsetStatus(restartedA, failedB, failedC))
	if got := onsetOf(failedB); !got.Equal(t0) {
		t.Errorf("a suspect that reached its threshold keeps its onset: %s", got)
	}
	if got := onsetOf(restartedA); !got.Equal(t1) {
		t.Errorf("a restarted container is a new onset: %s", got)
	}
	if got := onsetOf(failedC); !got.Equal(t1) {
		t.Errorf("a new failure is seen now: %s", got)
	}
	if entries() != 3 {
		t.Fatalf("the old instance of a is forgotten: %d entries", entries())
	}

	// a passes, b's status is gone from the node's report, c's pod is deleted.
	clk.Step(time.Minute)
	o.observe("n1", onsetStatus(probeStatus("a", "containerd://a2", appsv1alpha1.ProbeSucceeded, false), failedC))
	if entries() != 1 {
		t.Fatalf("a passing instance and a pod no longer reported are forgotten: %d entries", entries())
	}
	o.forgetPod("n1", "c")
	if entries() != 0 || len(o.byNode) != 0 {
		t.Fatalf("a deleted pod is forgotten: %v", o.byNode)
	}
	if got := onsetOf(restartedA); !got.Equal(clk.Now()) {
		t.Errorf("a failure that passed and fails again is a new onset: %s", got)
	}

	// A report read before its watch event is seen when read; a deleted report forgets its node.
	o.observe("n2", onsetStatus(probeStatus("d", "containerd://d1", appsv1alpha1.ProbeFailed, true)))
	o.observe("n2", nil)
	if _, ok := o.byNode["n2"]; ok {
		t.Fatal("a deleted report's node is forgotten")
	}
}

// The storm counts of a workload of 4 on two nodes (different clocks) are a correlated onset on
// the manager's clock: siblings first seen 20 minutes before the decided pod do not count, unless
// the decided pod was first seen then too.
func TestWorkloadStormOnsetFromTheWatch(t *testing.T) {
	for _, tc := range []struct {
		name           string
		decidedFailing bool          // the decided pod failed with its siblings
		gap            time.Duration // between the siblings' first sighting and the decided pod's
		wantFailing    int32
	}{
		{"3 of 4 failing for 20 minutes, then a new hang: only the hang counts", false, 20 * time.Minute, 1},
		{"all 4 first seen within a minute: a storm", false, time.Minute, 4},
		{"all 4 first seen 20 minutes ago, held all along: a storm", true, 20 * time.Minute, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, t0 := context.Background(), time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
			const ns = "shop"
			clk := clocktesting.NewFakeClock(t0)
			dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", UID: "d-web"},
				Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](4)}}
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1", UID: "rs-web-1",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-web", Controller: ptr.To(true)}}},
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](4)}}
			objs := []client.Object{dep, rs}
			npps := map[string]*appsv1alpha1.NodePodProbe{}
			reps := map[string]*appsv1alpha1.NodePodProbeReport{}
			var pods []*corev1.Pod
			for i := range 4 {
				// Two nodes, the second's clock an hour off: only the manager's clock is compared.
				node, skew := "n1", time.Duration(0)
				if i%2 == 1 {
					node, skew = "n2", time.Hour
				}
				p := testutil.NewPod(ns, fmt.Sprint("web-", i)).Enrolled().OnNode(node).
					ControlledBy("apps/v1", "ReplicaSet", rs.Name, rs.UID).Running("10.0.0.1").
					With(func(p *corev1.Pod) { p.UID = types.UID(fmt.Sprint("uid-", i)) }).Build()
				pods = append(pods, p)
				objs = append(objs, p)
				if npps[node] == nil {
					npps[node] = &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
					reps[node] = &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
					objs = append(objs, npps[node], reps[node],
						&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: appsv1alpha1.DaemonLeasePrefix + node},
							Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: t0.Add(skew)}, AcquireTime: &metav1.MicroTime{Time: t0.Add(skew - 2*time.Hour)}}})
				}
				withProbes(p, 0, "app")
				npps[node].Spec.PodProbes = append(npps[node].Spec.PodProbes, appsv1alpha1.PodProbe{Name: p.Name, Namespace: ns, UID: p.UID})
			}
			// report sets each node's report: pods failing, the others passing, as a node's clock says.
			report := func(failing ...*corev1.Pod) {
				for node, rep := range reps {
					rep.Status = appsv1alpha1.ProbeResults{ProbedGeneration: 1}
					for _, p := range pods {
						if p.Spec.NodeName != node {
							continue
						}
						ps := probeStatus(p.UID, testutil.ContainerIDOf(p, "app", 1), appsv1alpha1.ProbeSucceeded, false)
						for _, f := range failing {
							if f == p {
								ps = probeStatus(p.UID, testutil.ContainerIDOf(p, "app", 1), appsv1alpha1.ProbeFailed, true)
							}
						}
						ps.Name, ps.ProbeStates[0].Name = p.Name, p.Name+"-app"
						rep.Status.PodProbeStatuses = append(rep.Status.PodProbeStatuses, ps)
					}
				}
			}
			report(pods[:3]...)
			if tc.decidedFailing {
				report(pods...)
			}
			cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(objs...).
				WithStatusSubresource(reps["n1"], reps["n2"]).
				WithIndex(&corev1.Pod{}, managercache.PodByNode, managercache.PodNode).
				WithIndex(&corev1.Pod{}, managercache.ByController, managercache.ControllerUID).
				WithIndex(&appsv1.ReplicaSet{}, managercache.ByController, managercache.ControllerUID).
				WithIndex(&appsv1alpha1.ContainerRecreateRequest{}, managercache.CRRByPod, managercache.CRRPodUID).Build()
			settings := rules.Settings{RestartsEnabled: true, NodeStorm: rules.NodeStormRule{MaxFailing: intstr.FromString("100%"), MinWorkloads: 1}}
			b := NewBuilder(cache, NewWorkloads(cache, cache, cache, clk), Options{Settings: settings,
				Default: rules.DefaultPolicy(rules.Defaults{}), OperatorNamespace: "elo-system", Clock: clk})
			for _, rep := range reps {
				b.ObserveProbes(rep, false) // the watch's create events
			}

			clk.Step(tc.gap)
			report(pods...)
			for _, rep := range reps {
				if err := cache.Status().Update(ctx, rep); err != nil {
					t.Fatal(err)
				}
				b.ObserveProbes(rep, false)
			}
			_, f, err := b.Facts(ctx, client.ObjectKeyFromObject(pods[3]))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Failures) != 1 || f.Workload.Desired != 4 || len(f.Workload.Pods) != 4 {
				t.Fatalf("facts: %d failures, workload %+v", len(f.Failures), f.Workload)
			}
			if got := f.Workload.FailingPods(); got != tc.wantFailing {
				t.Errorf("failing pods %d, want %d (workload %+v)", got, tc.wantFailing, f.Workload)
			}
			if !f.Workload.Onset.Equal(f.Self.Onset) || f.Self.Onset.IsZero() {
				t.Errorf("the decided pod's onset %s, the workload's %s", f.Self.Onset, f.Workload.Onset)
			}
			// The policy status reads the same workload without an onset: every failing pod counts.
			st, err := b.Reader().WorkloadState(ctx, pods[3], Workload{Ref: rules.WorkloadRef{APIVersion: "apps/v1", Kind: "Deployment",
				Name: "web", UID: "d-web"}, Desired: ptr.To[int32](4)})
			if err != nil {
				t.Fatal(err)
			}
			if got := st.FailingPods(); got != 4 {
				t.Errorf("the status counts %d failing pods, want 4", got)
			}
		})
	}
}

// The node's results come from its report: one no daemon has written yet (the manager creates it
// empty) leaves the first sightings alone, a written one keeps them while they fail, a deleted
// one forgets them.
func TestObserveProbesFromTheReport(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := NewBuilder(fake.NewClientBuilder().WithScheme(testutil.Scheme()).Build(), nil,
		Options{OperatorNamespace: "elo-system", Clock: clk})
	failed := probeStatus("a", "containerd://a1", appsv1alpha1.ProbeFailed, false)
	first := clk.Now()
	report := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: appsv1alpha1.ProbeResults{ProbedGeneration: 1, PodProbeStatuses: []appsv1alpha1.PodProbeStatus{failed}}}
	b.ObserveProbes(report, false)
	clk.Step(time.Minute)
	b.ObserveProbes(&appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, false) // created again, empty
	report.Status.ProbedGeneration = 2
	b.ObserveProbes(report, false)
	if got := b.onsets.onset("n1", &failed); !got.Equal(first) {
		t.Fatalf("onset %s, want the first sighting %s kept", got, first)
	}
	b.ObserveProbes(report, true)
	clk.Step(time.Minute)
	if got := b.onsets.onset("n1", &failed); !got.Equal(clk.Now()) {
		t.Fatalf("onset %s after the report was deleted, want now %s", got, clk.Now())
	}
}
