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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// An enrolled container no daemon probes has no liveness (the webhook moved its probe): it is
// counted not probed, with the reason, whatever hides it: a probe the daemon stopped after it
// passed (reported NotProbed), a node whose daemon never wrote or stopped renewing its Lease, a
// pod the mapping left out of the node's NodePodProbe, a node with no NodePodProbe at all.
func TestUnprobed(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		probes []probeIs
		setup  func(npp *appsv1alpha1.NodePodProbe, rep *appsv1alpha1.NodePodProbeReport, pod *corev1.Pod)
		// without leaves the node's NodePodProbe ("npp") or its daemon's Lease ("lease") out.
		without string
		want    Unprobed
	}{
		{name: "both passing", probes: []probeIs{passing, passing}},
		{name: "failed and not probed yet are probed", probes: []probeIs{failed, unprobed}},
		{name: "one refused after it passed", probes: []probeIs{passing, notProbed},
			want: Unprobed{Containers: 1, Reason: UnprobedRefused}},
		{name: "both refused", probes: []probeIs{notProbed, notProbed}, want: Unprobed{Containers: 2, Reason: UnprobedRefused}},
		{name: "the daemon cannot name the pod's probes", probes: []probeIs{passing, passing},
			setup: func(_ *appsv1alpha1.NodePodProbe, rep *appsv1alpha1.NodePodProbeReport, pod *corev1.Pod) {
				rep.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID,
					NotProbed: "pod-not-found: no pod with UID u-web-0 on this node (yet)"}}
			}, want: Unprobed{Containers: 2, Reason: UnprobedRefused}},
		{name: "the daemon cannot name the pod's probes, a failed state left beside it", probes: []probeIs{failed, passing},
			setup: func(_ *appsv1alpha1.NodePodProbe, rep *appsv1alpha1.NodePodProbeReport, _ *corev1.Pod) {
				rep.Status.PodProbeStatuses[0].NotProbed = "undecodable: the pod's probe context does not decode"
			}, want: Unprobed{Containers: 2, Reason: UnprobedRefused}},
		{name: "the report leaves out the pod's namespace", probes: []probeIs{passing, passing},
			setup: func(_ *appsv1alpha1.NodePodProbe, rep *appsv1alpha1.NodePodProbeReport, pod *corev1.Pod) {
				rep.Status.OmittedNamespaces = []string{"a-noisy-one", pod.Namespace}
			}, want: Unprobed{Containers: 2, Reason: UnprobedOmitted}},
		{name: "the report cuts the pod's namespace to a Failed state: that one is probed", probes: []probeIs{passing, failed},
			setup: func(_ *appsv1alpha1.NodePodProbe, rep *appsv1alpha1.NodePodProbeReport, pod *corev1.Pod) {
				rep.Status.OmittedNamespaces = []string{"a-noisy-one", pod.Namespace}
			}, want: Unprobed{Containers: 1, Reason: UnprobedOmitted}},
		{name: "the report leaves out another namespace", probes: []probeIs{passing, passing},
			setup: func(_ *appsv1alpha1.NodePodProbe, rep *appsv1alpha1.NodePodProbeReport, _ *corev1.Pod) {
				rep.Status.OmittedNamespaces = []string{"a-noisy-one"}
			}},
		{name: "report never written", probes: []probeIs{passing, passing},
			setup: func(_ *appsv1alpha1.NodePodProbe, rep *appsv1alpha1.NodePodProbeReport, _ *corev1.Pod) {
				rep.Status = appsv1alpha1.ProbeResults{}
			}, want: Unprobed{Containers: 2, Reason: UnprobedNoReport}},
		{name: "no daemon Lease", probes: []probeIs{passing}, without: "lease", want: Unprobed{Containers: 1, Reason: UnprobedDaemonNotReporting}},
		{name: "pod left out of the spec", probes: []probeIs{passing},
			setup: func(npp *appsv1alpha1.NodePodProbe, _ *appsv1alpha1.NodePodProbeReport, pod *corev1.Pod) {
				npp.Spec.PodProbes = nil
				pod.Annotations = map[string]string{appsv1alpha1.AnnotationProbeContext: `[{"name":"app","livenessProbe":{"exec":{"command":["true"]}}},` +
					`{"name":"side","livenessProbe":{"exec":{"command":["true"]}}}]`}
			}, want: Unprobed{Containers: 2, Reason: UnprobedNotMapped}},
		{name: "node without NodePodProbe", probes: []probeIs{passing}, without: "npp", want: Unprobed{Containers: 1, Reason: UnprobedNotMapped}},
		{name: "a pod admitted in Shadow counts nowhere: the kubelet probes it", probes: []probeIs{notProbed, notProbed},
			setup: func(_ *appsv1alpha1.NodePodProbe, _ *appsv1alpha1.NodePodProbeReport, pod *corev1.Pod) {
				pod.Labels = map[string]string{appsv1alpha1.LabelMode: appsv1alpha1.ModeShadow}
			}},
		{name: "terminating pod counts nowhere", probes: []probeIs{notProbed},
			setup: func(_ *appsv1alpha1.NodePodProbe, _ *appsv1alpha1.NodePodProbeReport, pod *corev1.Pod) {
				pod.DeletionTimestamp, pod.Finalizers = &metav1.Time{Time: now}, []string{"x"}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			npp, rep, pod := nodeResults(now, tc.probes, "current spec")
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "elo-system", Name: appsv1alpha1.DaemonLeasePrefix + "n1"},
				Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now}, AcquireTime: &metav1.MicroTime{Time: now.Add(-time.Hour)}}}
			if tc.setup != nil {
				tc.setup(npp, rep, pod)
			}
			objs := []client.Object{rep, pod}
			if tc.without != "npp" {
				objs = append(objs, npp)
			}
			if tc.without != "lease" {
				objs = append(objs, lease)
			}
			cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(objs...).Build()
			clk := clocktesting.NewFakePassiveClock(now)
			b := NewBuilder(cache, NewWorkloads(cache, cache, cache, clk), Options{Default: rules.DefaultPolicy(rules.Defaults{}),
				OperatorNamespace: "elo-system", Clock: clk})
			rd := b.Reader()
			got, err := rd.Unprobed(context.Background(), pod)
			if err != nil {
				t.Fatal(err)
			}
			if got.Containers == 0 && got.Message != "" || got.Containers > 0 && got.Message == "" {
				t.Fatalf("message %q for %d containers", got.Message, got.Containers)
			}
			got.Message = ""
			if got != tc.want {
				t.Fatalf("unprobed = %+v, want %+v", got, tc.want)
			}
			// Not probed is never evidence: neither passing nor failed.
			e, err := rd.Evidence(context.Background(), pod)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.Containers == len(tc.probes) && (e.Passed || e.Failed > 0 || e.Suspect) {
				t.Fatalf("evidence of a pod nobody probes: %+v", e)
			}
		})
	}
}
