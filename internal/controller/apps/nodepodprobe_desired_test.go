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
*/package apps

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
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
		want     []string // "name/uid@ip:probe=port"
		problems int
		reason   string // of every problem, when set
		message  string // in every problem, when set
	}{
		{name: "mapped, sorted, port resolved", pods: []corev1.Pod{unitPod("b", "2", "10.0.0.2", nil), unitPod("a", "1", "10.0.0.1", nil)},
			want: []string{"a/1@10.0.0.1:a-web=8080", "b/2@10.0.0.2:b-web=8080"}},
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
		})}, want: []string{"a/1@ip:a-web=9"}},
		{name: "not sealed: nothing of the pod is mapped, silently (the seal controller reports it)", pods: []corev1.Pod{
			unitPod("a", "1", "ip", func(p *corev1.Pod) { p.Annotations["untrusted"] = "" }), unitPod("b", "2", "ip", nil)},
			want: []string{"b/2@ip:b-web=8080"}},
		{name: "regular container of an OnFailure pod enrolled earlier", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		})}, problems: 1, reason: ReasonNotMapped},
		{name: "Never pod: its sidecar is mapped, its regular container is not", pods: []corev1.Pod{unitPod("a", "1", "ip", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
			p.Annotations[appsv1alpha1.AnnotationProbeContext] = `[{"name":"proxy","livenessProbe":{"tcpSocket":{"port":7}}},` +
				`{"name":"web","livenessProbe":{"tcpSocket":{"port":8}}}]`
		})}, want: []string{"a/1@ip:a-proxy=7"}, problems: 1, reason: ReasonNotMapped},
		{name: "a pod with more probes than the schema allows is left out, its neighbour is mapped", pods: []corev1.Pod{
			widePodUnit("a", "1", appsv1alpha1.MaxProbesPerPod+1), unitPod("b", "2", "ip", nil)},
			want: []string{"b/2@ip:b-web=8080"}, problems: 1, reason: ReasonNotMapped,
			message: "the NodePodProbe schema would refuse the pod's entry: spec.podProbes[].probes: Too many: 65: must have at most 64 items"},
		{name: "the longest probe name the API allows (253-byte pod, 63-byte container) is mapped", pods: []corev1.Pod{
			unitPod(strings.Repeat("a", 253), "1", "ip", func(p *corev1.Pod) {
				p.Spec.Containers[0].Name = strings.Repeat("w", 63)
				p.Annotations[appsv1alpha1.AnnotationProbeContext] = `[{"name":"` + strings.Repeat("w", 63) + `","livenessProbe":{"tcpSocket":{"port":7}}}]`
			}), unitPod("b", "2", "ip", nil)},
			want: []string{strings.Repeat("a", 253) + "/1@ip:" + strings.Repeat("a", 253) + "-" + strings.Repeat("w", 63) + "=7",
				"b/2@ip:b-web=8080"}},
		{name: "64 probes are mapped", pods: []corev1.Pod{widePodUnit("a", "1", appsv1alpha1.MaxProbesPerPod)},
			want: wideWant("a", "1", appsv1alpha1.MaxProbesPerPod)},
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
			got, problems := desiredPodProbes(tc.pods, trusted)
			var s []string
			for _, p := range got {
				for _, pr := range p.Probes {
					port := intstr.IntOrString{}
					if pr.Probe.HTTPGet != nil {
						port = pr.Probe.HTTPGet.Port
					} else if pr.Probe.TCPSocket != nil {
						port = pr.Probe.TCPSocket.Port
					}
					s = append(s, p.Name+"/"+string(p.UID)+"@"+p.IP+":"+pr.Name+"="+port.String())
				}
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

func wideWant(name, uid string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s/%s@ip:%s-c%d=9", name, uid, name, i))
	}
	return out
}

// A node with more enrolled pods than a NodePodProbe holds keeps the oldest ones mapped and
// reports each newer one.
func TestDesiredPodProbesNodeCap(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := appsv1alpha1.MaxPodProbesPerNode + 2
	pods := make([]corev1.Pod, 0, n)
	for i := range n {
		// Names sort against age, so that the cap visibly goes by creation time.
		pods = append(pods, unitPod(fmt.Sprintf("p%04d", n-i), fmt.Sprint(i), "ip", func(p *corev1.Pod) {
			p.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(i) * time.Second))
		}))
	}
	got, problems := desiredPodProbes(pods, func(*corev1.Pod) error { return nil })
	if len(got) != appsv1alpha1.MaxPodProbesPerNode {
		t.Fatalf("mapped %d pods, want %d", len(got), appsv1alpha1.MaxPodProbesPerNode)
	}
	if len(problems) != 2 {
		t.Fatalf("got %d problems, want 2", len(problems))
	}
	for i, p := range problems {
		if want := pods[appsv1alpha1.MaxPodProbesPerNode+i].Name; p.pod.Name != want || p.reason != ReasonNotMapped ||
			!strings.Contains(p.message, "a NodePodProbe holds at most 1000 (spec.podProbes: maxItems 1000)") {
			t.Errorf("problem %d: %s %s %q, want the newest pod %s", i, p.pod.Name, p.reason, p.message, want)
		}
	}
	if got[0].Name != "p0003" {
		t.Errorf("the spec is sorted by name: first %s", got[0].Name)
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
	r := &NodePodProbeReconciler{OperatorNamespace: "op-system"}
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
