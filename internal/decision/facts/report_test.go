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

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// probeIs is what a probe's last result was, as the daemon knows it.
type probeIs string

const (
	passing  probeIs = "passing"
	failed   probeIs = "failed"
	suspect  probeIs = "suspect"  // failing below its threshold
	unprobed probeIs = "unprobed" // no result yet
	// notProbed: the daemon does not run it (its trust gate refused the pod after it passed).
	notProbed probeIs = "notProbed"
	// listedPassing: listed Succeeded without a run of failures (the daemon leaves such states
	// out; a report may still list one).
	listedPassing probeIs = "listedPassing"
)

// The evidence of a pod from its node's report, which lists only what is not passing: complete
// for the current spec, a probe it leaves out passed; written for an older spec (the spec changed
// since the daemon's write), it tells nothing about the probes it leaves out.
func TestEvidence_ReportListsOnlyWhatIsNotPassing(t *testing.T) {
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		probes []probeIs // of the pod's two containers, app and side; one entry: app only
		want   Evidence
	}{
		{"one probe passing", []probeIs{passing}, Evidence{Passed: true}},
		{"one probe not probed yet", []probeIs{unprobed}, Evidence{}},
		{"one probe failed", []probeIs{failed}, Evidence{Failed: 1}},
		{"one probe suspect", []probeIs{suspect}, Evidence{Suspect: true}},
		{"passing and not probed yet", []probeIs{passing, unprobed}, Evidence{Passed: true}},
		{"passing and failed", []probeIs{passing, failed}, Evidence{Failed: 1}},
		{"passing and suspect", []probeIs{passing, suspect}, Evidence{Suspect: true}},
		{"both passing", []probeIs{passing, passing}, Evidence{Passed: true}},
		{"both failed", []probeIs{failed, failed}, Evidence{Failed: 2}},
		{"neither probed", []probeIs{unprobed, unprobed}, Evidence{}},
		{"one probe refused after it passed", []probeIs{notProbed}, Evidence{}},
		{"both refused", []probeIs{notProbed, notProbed}, Evidence{}},
		{"passing and refused", []probeIs{passing, notProbed}, Evidence{Passed: true}},
	} {
		for _, shape := range []string{"current spec", "older spec"} {
			t.Run(tc.name+", "+shape, func(t *testing.T) {
				npp, rep, pod := nodeResults(now, tc.probes, shape)
				got := evidenceOf(t, now, npp, pod, rep)
				want := tc.want
				if want.Failed > 0 || want.Suspect {
					want.Since = now.Add(-10 * time.Second) // the failingSince nodeResults writes
				}
				if shape == "older spec" {
					// Passing probes are left out of the report, for a spec that may not have
					// had them: they count as not probed yet.
					want.Passed = false
				}
				// Since is compared as an instant (a metav1.Time may carry another location).
				gotSince, wantSince := got.Since, want.Since
				got.Since, want.Since = time.Time{}, time.Time{}
				if got != want || !gotSince.Equal(wantSince) {
					t.Fatalf("evidence %+v since %s, want %+v since %s", got, gotSince, want, wantSince)
				}
			})
		}
	}
}

// A pod missing from the report has passed only if it is in the spec the report covers; a report
// no daemon has written (the manager creates it empty), or none at all, says nothing.
func TestEvidence_ReportOmitsOnlyPodsOfItsSpec(t *testing.T) {
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	npp, rep, pod := nodeResults(now, []probeIs{passing}, "current spec")
	other := testutil.NewPod("ns", "other").OnNode("n1").With(func(p *corev1.Pod) { p.UID = "u-other" }).Build()
	if got := evidenceOf(t, now, npp, other, rep); got != (Evidence{}) {
		t.Fatalf("a pod the spec does not list: %+v, want no evidence", got)
	}
	if got := evidenceOf(t, now, npp, pod, rep); got != (Evidence{Passed: true}) {
		t.Fatalf("a pod of the spec the report leaves out: %+v, want passed", got)
	}
	rep.Status.ProbedGeneration = 0
	if got := evidenceOf(t, now, npp, pod, rep); got != (Evidence{}) {
		t.Fatalf("no probedGeneration: %+v, want no evidence", got)
	}
	if got := evidenceOf(t, now, npp, pod); got != (Evidence{}) {
		t.Fatalf("no report: %+v, want no evidence", got)
	}
}

// While the node's daemon is not reporting (its Lease expired, or there is none), nothing in its
// report is passing, omitted or listed: a pod nobody probes any more is not healthy, for its pod
// evidence nor for its containers. Unprobed says so for every probe of the pod.
func TestNothingPassesWhileTheDaemonIsNotReporting(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		probes []probeIs
	}{
		{"one probe passing", []probeIs{passing}},
		{"both passing", []probeIs{passing, passing}},
		{"one listed passing", []probeIs{listedPassing}},
		{"passing and listed passing", []probeIs{passing, listedPassing}},
		{"passing and failed", []probeIs{passing, failed}},
	} {
		for _, daemon := range []string{"reporting", "lease expired", "no lease"} {
			t.Run(tc.name+", "+daemon, func(t *testing.T) {
				npp, rep, pod := nodeResults(now, tc.probes, "current spec")
				lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: appsv1alpha1.DaemonLeasePrefix + "n1"},
					Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now}, AcquireTime: &metav1.MicroTime{Time: now.Add(-time.Hour)}}}
				objs := []client.Object{npp, rep, pod}
				if daemon != "no lease" {
					objs = append(objs, lease)
				}
				cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(objs...).Build()
				clk := clocktesting.NewFakePassiveClock(now)
				b := NewBuilder(cache, NewWorkloads(cache, cache, cache, clk), Options{Default: rules.DefaultPolicy(rules.Defaults{}),
					OperatorNamespace: "elo-system", Clock: clk})
				ctx := context.Background()
				if _, err := b.Reader().Evidence(ctx, pod); err != nil { // the manager sees the renewal now
					t.Fatal(err)
				}
				reporting := daemon == "reporting"
				if daemon == "lease expired" {
					clk.SetTime(now.Add(time.Duration(appsv1alpha1.DaemonLeaseDuration+1) * time.Second))
				}
				rd := b.Reader()
				e, err := rd.Evidence(ctx, pod)
				if err != nil {
					t.Fatal(err)
				}
				failing := slices.Contains(tc.probes, failed)
				if want := reporting && !failing; e.Passed != want {
					t.Fatalf("evidence %+v: passed %t, want %t", e, e.Passed, want)
				}
				containers, err := rd.containerStates(ctx, pod)
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range containers {
					if want := reporting && tc.probes[i] != failed; c.Healthy != want {
						t.Fatalf("container %s (%s): healthy %t, want %t", c.Name, tc.probes[i], c.Healthy, want)
					}
				}
				u, err := rd.Unprobed(ctx, pod)
				if err != nil {
					t.Fatal(err)
				}
				if want := (Unprobed{Containers: len(tc.probes), Reason: UnprobedDaemonNotReporting}); !reporting &&
					(u.Containers != want.Containers || u.Reason != want.Reason) {
					t.Fatalf("unprobed %+v, want %+v", u, want)
				}
				if reporting && u.Containers != 0 {
					t.Fatalf("unprobed %+v while the daemon reports", u)
				}
			})
		}
	}
}

// nodeResults builds the NodePodProbe of node n1 with one pod whose probes are as given, and its
// report as the daemon writes it, listing only what is not passing: for the current spec, or
// ("older spec") written before the spec's last change.
func nodeResults(now time.Time, probes []probeIs, shape string) (*appsv1alpha1.NodePodProbe, *appsv1alpha1.NodePodProbeReport, *corev1.Pod) {
	pod := testutil.NewPod("ns", "web-0").OnNode("n1").With(func(p *corev1.Pod) { p.UID = "u-web-0" }).Build()
	npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: "n1", Generation: 3}}
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	spec := appsv1alpha1.PodProbe{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}
	ps := appsv1alpha1.PodProbeStatus{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}
	at := metav1.NewTime(now.Add(-10 * time.Second))
	withProbes(pod, 0, []string{"app", "side"}[:len(probes)]...)
	for i, is := range probes {
		container := []string{"app", "side"}[i]
		name := fmt.Sprintf("%s-%s", pod.Name, container)
		s := appsv1alpha1.ContainerProbeState{Name: name, ContainerID: "containerd://" + container, LastProbeTime: at, LastTransitionTime: at}
		switch is {
		case passing:
			continue
		case listedPassing:
			s.State = appsv1alpha1.ProbeSucceeded
		case failed:
			s.State, s.FailingSince = appsv1alpha1.ProbeFailed, &at
		case suspect:
			s.State, s.FailingSince = appsv1alpha1.ProbeSucceeded, &at
		case unprobed:
			s = appsv1alpha1.ContainerProbeState{Name: name, State: appsv1alpha1.ProbeUnknown}
		case notProbed:
			s = appsv1alpha1.ContainerProbeState{Name: name, State: appsv1alpha1.ProbeNotProbed, Message: "unknown key"}
		}
		ps.ProbeStates = append(ps.ProbeStates, s)
	}
	npp.Spec.PodProbes = []appsv1alpha1.PodProbe{spec}
	if len(ps.ProbeStates) > 0 {
		rep.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{ps}
	}
	rep.Status.ProbedGeneration = map[string]int64{"current spec": 3, "older spec": 2}[shape]
	return npp, rep, pod
}

// evidenceOf reads the pod's evidence from a cache holding npp, the node's daemon Lease (its
// daemon started before the results were taken) and objs (the node's report among them).
func evidenceOf(t *testing.T, now time.Time, npp *appsv1alpha1.NodePodProbe, pod *corev1.Pod, objs ...client.Object) Evidence {
	t.Helper()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: appsv1alpha1.DaemonLeasePrefix + "n1"},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now}, AcquireTime: &metav1.MicroTime{Time: now.Add(-time.Hour)}}}
	cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(append(objs, npp, lease, pod)...).Build()
	clk := clocktesting.NewFakePassiveClock(now)
	b := NewBuilder(cache, NewWorkloads(cache, cache, cache, clk), Options{Default: rules.DefaultPolicy(rules.Defaults{}),
		OperatorNamespace: "elo-system", Clock: clk})
	e, err := b.Reader().Evidence(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A namespace the report cuts to its Failed states (omittedNamespaces, over its share of the
// report's byte budget) still has those failures restarted: a listed Failed state is a failure
// and failed evidence, while its probes the report does not list are neither passing nor failed.
func TestOmittedNamespace_ListedFailedStatesAreFailures(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	npp, rep, pod := nodeResults(now, []probeIs{failed, passing}, "current spec")
	rep.Status.OmittedNamespaces = []string{pod.Namespace}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: appsv1alpha1.DaemonLeasePrefix + "n1"},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now}, AcquireTime: &metav1.MicroTime{Time: now.Add(-time.Hour)}}}
	cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(npp, rep, pod, lease).Build()
	clk := clocktesting.NewFakePassiveClock(now)
	b := NewBuilder(cache, NewWorkloads(cache, cache, cache, clk), Options{Default: rules.DefaultPolicy(rules.Defaults{}),
		OperatorNamespace: "elo-system", Clock: clk})
	ctx := context.Background()

	_, f, err := b.Facts(ctx, client.ObjectKeyFromObject(pod))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Failures) != 1 || f.Failures[0].Container != "app" || f.Failures[0].ContainerID != "containerd://app" {
		t.Fatalf("failures %+v: want the listed Failed state of app", f.Failures)
	}
	rd := b.Reader()
	e, err := rd.Evidence(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if e.Failed != 1 || e.Passed {
		t.Fatalf("evidence %+v: want one failed, nothing passed", e)
	}
	containers, err := rd.containerStates(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if len(containers) != 2 || !containers[0].Failing || containers[1].Healthy || containers[1].Failing {
		t.Fatalf("containers %+v: want app failing, side neither healthy nor failing", containers)
	}
}
