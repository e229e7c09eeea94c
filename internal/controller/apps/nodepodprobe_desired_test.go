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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := desiredPodProbes(tc.pods)
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
		})
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
