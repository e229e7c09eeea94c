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

package nodepodprobe

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

func unitPod(name, uid, ip string, mutate func(*corev1.Pod)) corev1.Pod {
	p := testutil.NewPod("ns", name).Enrolled().OnNode("n1").Containers("web").Port("web", "http", 8080).
		Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: `[{"name":"web","livenessProbe":{"httpGet":{"port":"http"}}}]`}).
		Running(ip).With(func(p *corev1.Pod) { p.UID = types.UID(uid) }).Build()
	if mutate != nil {
		mutate(p)
	}
	return *p
}

func TestDesiredPodProbes(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name     string
		pods     []corev1.Pod
		want     []string // "name/uid"
		problems int
		reason   string // of every problem, when set
		message  string // in every problem, when set
	}{
		{name: "mapped, sorted, port resolved", pods: []corev1.Pod{unitPod("b", "2", "10.0.0.2", nil), unitPod("a", "1", "10.0.0.1", nil)},
			want: []string{"a/1", "b/2"}},
		{name: "no IP", pods: []corev1.Pod{unitPod("a", "1", "", nil)}},
		{name: "succeeded", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })}},
		{name: "failed", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })}},
		{name: "terminating", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) { p.DeletionTimestamp = &now })}},
		{name: "not enrolled", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) { p.Labels = nil })}},
		{name: "unscheduled", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) { p.Spec.NodeName = "" })}},
		{name: "no context", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) { p.Annotations = nil })}},
		{name: "broken context", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) {
			p.Annotations[appsv1alpha1.AnnotationProbeContext] = "{"
		})}, problems: 1},
		{name: "missing named port", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) { p.Spec.Containers[0].Ports = nil })},
			problems: 1},
		{name: "unknown container", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "other" })},
			problems: 1},
		{name: "kruise key", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) {
			p.Annotations = map[string]string{appsv1alpha1.AnnotationKruiseProbeContext: `[{"name":"web","livenessProbe":{"tcpSocket":{"port":9}}}]`}
		})}, want: []string{"a/1"}},
		{name: "not sealed: nothing of the pod is mapped, silently (the seal controller reports it)", pods: []corev1.Pod{
			unitPod("a", "1", "ip", func(p *corev1.Pod) { p.Annotations["untrusted"] = "" }), unitPod("b", "2", "ip", nil)},
			want: []string{"b/2"}},
		{name: "regular container of an OnFailure pod enrolled earlier", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		})}, problems: 1, reason: ReasonNotMapped},
		{name: "Never pod: its sidecar is mapped, its regular container is not", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
			p.Annotations[appsv1alpha1.AnnotationProbeContext] = `[{"name":"proxy","livenessProbe":{"tcpSocket":{"port":7}}},` +
				`{"name":"web","livenessProbe":{"tcpSocket":{"port":8}}}]`
		})}, want: []string{"a/1"}, problems: 1, reason: ReasonNotMapped},
		{name: "a pod with more probes than its report may list is left out, its neighbour is mapped", pods: []corev1.Pod{
			widePodUnit("a", "1", appsv1alpha1.MaxProbesPerPod+1), unitPod("b", "2", "ip", nil)},
			want: []string{"b/2"}, problems: 1, reason: ReasonNotMapped,
			message: "the pod has 65 liveness probes; a NodePodProbeReport lists at most 64 per pod"},
		{name: "the longest names the API allows (253-byte pod, 63-byte container) are mapped", pods: []corev1.Pod{
			unitPod(strings.Repeat("a", 253), "1", "ip", func(p *corev1.Pod) {
				p.Spec.Containers[0].Name = strings.Repeat("w", 63)
				p.Annotations[appsv1alpha1.AnnotationProbeContext] = `[{"name":"` + strings.Repeat("w", 63) + `","livenessProbe":{"tcpSocket":{"port":7}}}]`
			}), unitPod("b", "2", "ip", nil)},
			want: []string{strings.Repeat("a", 253) + "/1", "b/2"}},
		{name: "64 probes are mapped", pods: []corev1.Pod{widePodUnit("a", "1", appsv1alpha1.MaxProbesPerPod)},
			want: []string{"a/1"}},
	}
	// The trust check itself is TestTrust's; here a marker annotation stands for a bad signature.
	trusted := func(p *corev1.Pod) error {
		if _, bad := p.Annotations["untrusted"]; bad {
			return errors.New("not signed")
		}
		return nil
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problems, leftOut := desiredPodProbes(tc.pods, trusted)
			if leftOut != nil {
				t.Errorf("left out %v", leftOut)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.Name+"/"+string(p.UID))
			}
			if strings.Join(s, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", s, tc.want)
			}
			if len(problems) != tc.problems {
				t.Errorf("got %d problems, want %d: %+v", len(problems), tc.problems, problems)
			}
			for _, p := range problems {
				if tc.reason != "" && p.reason != tc.reason {
					t.Errorf("problem %+v, want reason %s", p, tc.reason)
				}
				if !strings.Contains(p.message, tc.message) {
					t.Errorf("problem %q, want it to contain %q", p.message, tc.message)
				}
			}
		})
	}
}

// widePodUnit is an enrolled pod with n containers, each with a TCP probe on port 9.
func widePodUnit(name, uid string, n int) corev1.Pod {
	return unitPod(name, uid, "ip", func(p *corev1.Pod) {
		p.Spec.Containers = nil
		var ctx []string
		for i := range n {
			c := fmt.Sprintf("c%d", i)
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
			ctx = append(ctx, `{"name":"`+c+`","livenessProbe":{"tcpSocket":{"port":9}}}`)
		}
		p.Annotations[appsv1alpha1.AnnotationProbeContext] = "[" + strings.Join(ctx, ",") + "]"
	})
}

// capNS is an entry of namespace ns created at second i, for the cut tests.
func capPod(ns string, i int) *corev1.Pod {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := unitPod(fmt.Sprintf("p%04d", i), ns+fmt.Sprint(i), "ip", func(p *corev1.Pod) {
		p.Namespace = ns
		p.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(i) * time.Second))
	})
	return &p
}

// capPods leaves out pods of the namespace that has the most entries left, newest first, until
// the rest fit: a namespace with fewer pods than another never loses one to it.
func TestCapPods(t *testing.T) {
	cases := []struct {
		name  string
		pods  map[string]int // namespace -> pods
		limit int
		kept  map[string]int
	}{
		{name: "within the limit", pods: map[string]int{"a": 3, "b": 2}, limit: 5, kept: map[string]int{"a": 3, "b": 2}},
		{name: "one namespace takes most: only it loses", pods: map[string]int{"a": 30, "b": 1, "c": 2}, limit: 10,
			kept: map[string]int{"a": 7, "b": 1, "c": 2}},
		{name: "two large namespaces level down, the small one keeps all", pods: map[string]int{"a": 8, "b": 6, "c": 2}, limit: 10,
			kept: map[string]int{"a": 4, "b": 4, "c": 2}},
		{name: "a tie loses from the namespace named first", pods: map[string]int{"a": 3, "b": 3}, limit: 5,
			kept: map[string]int{"a": 2, "b": 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out []appsv1alpha1.PodProbe
			var from []*corev1.Pod
			i := 0
			for _, ns := range []string{"c", "b", "a"} { // not in name order
				for range tc.pods[ns] {
					p := capPod(ns, i)
					i++
					out = append(out, appsv1alpha1.PodProbe{Name: p.Name, Namespace: ns, UID: p.UID})
					from = append(from, p)
				}
			}
			kept, dropped := capPods(out, from, tc.limit)
			got := map[string]int{}
			for _, e := range kept {
				got[e.Namespace]++
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.kept) {
				t.Fatalf("kept %v, want %v", got, tc.kept)
			}
			if len(kept)+len(dropped) != len(out) {
				t.Fatalf("kept %d + dropped %d != %d", len(kept), len(dropped), len(out))
			}
			// The newest pods of a namespace go first.
			for _, d := range dropped {
				for _, k := range kept {
					if k.Namespace == d.Namespace && capCreated(from, k.UID).After(d.CreationTimestamp.Time) {
						t.Fatalf("%s kept, newer than %s which was left out", k.Name, d.Name)
					}
				}
			}
		})
	}
}

func capCreated(from []*corev1.Pod, uid types.UID) time.Time {
	for _, p := range from {
		if p.UID == uid {
			return p.CreationTimestamp.Time
		}
	}
	return time.Time{}
}

// A node with more enrolled pods than a NodePodProbe holds leaves out pods of the namespace
// with the most entries, reports each, and counts them for the Mapped condition.
func TestDesiredPodProbesNodeCap(t *testing.T) {
	var pods []corev1.Pod
	for i := range appsv1alpha1.MaxPodProbesPerNode - 2 {
		pods = append(pods, *capPod("big", i))
	}
	for i := range 4 {
		pods = append(pods, *capPod("small", 5000+i))
	}
	got, problems, leftOut := desiredPodProbes(pods, func(*corev1.Pod) error { return nil })
	if len(got) != appsv1alpha1.MaxPodProbesPerNode {
		t.Fatalf("mapped %d pods, want %d", len(got), appsv1alpha1.MaxPodProbesPerNode)
	}
	if fmt.Sprint(leftOut) != "map[big:2]" {
		t.Fatalf("left out %v, want 2 pods of namespace big", leftOut)
	}
	if len(problems) != 2 {
		t.Fatalf("got %d problems, want 2", len(problems))
	}
	for _, p := range problems {
		if p.pod.Namespace != "big" || p.reason != ReasonNotMapped ||
			!strings.Contains(p.message, "a NodePodProbe holds at most 1000 (spec.podProbes: maxItems 1000), and namespace big has the most") {
			t.Errorf("problem: %s/%s %s %q", p.pod.Namespace, p.pod.Name, p.reason, p.message)
		}
	}
	if got[0].Namespace != "big" || got[0].Name != "p0000" || got[len(got)-1].Namespace != "small" {
		t.Errorf("the spec is sorted by namespace and name: first %s/%s", got[0].Namespace, got[0].Name)
	}
	if msg := leftOutMessage(leftOut); !strings.Contains(msg, "2 pods of namespace big are not probed") {
		t.Errorf("Mapped message %q", msg)
	}
}

func TestMappingRelevantChange(t *testing.T) {
	base := unitPod("a", "1", "ip", nil)
	now := metav1.Now()
	cases := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   bool
	}{
		{"readiness only", func(p *corev1.Pod) { p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady}} }, false},
		{"container state only", func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web"}} }, false},
		{"ip", func(p *corev1.Pod) { p.Status.PodIP = "other" }, true},
		{"phase", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }, true},
		{"terminating", func(p *corev1.Pod) { p.DeletionTimestamp = &now }, true},
		{"node", func(p *corev1.Pod) { p.Spec.NodeName = "n2" }, true},
		{"enrolled label", func(p *corev1.Pod) { p.Labels = nil }, true},
		{"context", func(p *corev1.Pod) { p.Annotations[appsv1alpha1.AnnotationProbeContext] = "[]" }, true},
		{"signature", func(p *corev1.Pod) { p.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = "v1.1.x" }, true},
		{"seal", func(p *corev1.Pod) { p.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = "v1.k.x" }, true},
		{"context key", func(p *corev1.Pod) {
			p.Annotations = map[string]string{appsv1alpha1.AnnotationKruiseProbeContext: base.Annotations[appsv1alpha1.AnnotationProbeContext]}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := base.DeepCopy()
			tc.mutate(n)
			if got := mappingRelevantChange(&base, n); got != tc.want {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
}

func TestTrust(t *testing.T) {
	r := &Reconciler{OperatorNamespace: "op-system"}
	trust := r.trust(testutil.TrustedKeys())
	signed := func(ns string) *corev1.Pod {
		p := unitPod("a", "1", "ip", func(p *corev1.Pod) {
			p.Namespace = ns
			p.CreationTimestamp = metav1.NewTime(time.Now())
		})
		return testutil.Seal(testutil.Admit(&p))
	}
	if err := trust(signed("shop")); err != nil {
		t.Errorf("a sealed pod: %v", err)
	}
	unsealed := signed("shop")
	delete(unsealed.Annotations, appsv1alpha1.AnnotationProbeContextSeal)
	if err := trust(unsealed); !errors.Is(err, signature.ErrNotSigned) {
		t.Errorf("an admitted pod, not sealed yet: %v", err)
	}
	old := signed("shop")
	delete(old.Annotations, appsv1alpha1.AnnotationProbeContextSeal)
	delete(old.Annotations, appsv1alpha1.AnnotationProbeContextSignature)
	old.CreationTimestamp = metav1.NewTime(time.Unix(0, 0))
	if err := trust(old); !errors.Is(err, signature.ErrNotSigned) {
		t.Errorf("an unsigned pod is trusted for its creation time: %v", err)
	}
	for _, ns := range []string{"kube-system", "op-system"} {
		// Even signed: the webhook never enrolls there, so the signature was copied or forged.
		err := trust(signed(ns))
		if !errors.Is(err, signature.ErrNotSigned) || !strings.Contains(err.Error(), "no pod in namespace "+ns) {
			t.Errorf("a pod in %s: %v", ns, err)
		}
	}
}
