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

package probecontext

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestNativeProbeChanges(t *testing.T) {
	exec := func(cmd string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{cmd}}}}
	}
	// web and the sidecar log are enrolled; job keeps its native probe (its restartPolicy is not
	// Always), bare has none; the probe context's HTTP header "bare" names no container.
	ctx := `[{"name":"log","livenessProbe":{"exec":{"command":["/log-ok"]}}},` +
		`{"name":"web","livenessProbe":{"httpGet":{"port":80,"httpHeaders":[{"name":"bare","value":"x"}]}}}]`
	base := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Labels:      map[string]string{appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue},
				Annotations: map[string]string{appsv1alpha1.AnnotationProbeContext: ctx},
			},
			Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "setup"}, {Name: "log", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
				Containers:     []corev1.Container{{Name: "web"}, {Name: "job", LivenessProbe: exec("/job-ok")}, {Name: "bare"}},
			},
		}
	}
	cases := []struct {
		name   string
		old    func(p *corev1.Pod)
		mutate func(p *corev1.Pod)
		want   []string // field paths, in order
	}{
		{name: "nothing changed", mutate: func(*corev1.Pod) {}},
		{name: "probe added to an enrolled container", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = exec("/ok") },
			want: []string{"spec.containers[0].livenessProbe"}},
		{name: "probe added to an enrolled sidecar and container", mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers[1].LivenessProbe = exec("/ok")
			p.Spec.Containers[0].LivenessProbe = exec("/ok")
		}, want: []string{"spec.initContainers[1].livenessProbe", "spec.containers[0].livenessProbe"}},
		{name: "the kept native probe changed", mutate: func(p *corev1.Pod) { p.Spec.Containers[1].LivenessProbe = exec("/other") }},
		{name: "probe added to a container that had none and is not enrolled, named by a header", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[2].LivenessProbe = exec("/ok")
		}},
		{name: "a native probe already beside the context, unchanged",
			old:    func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = exec("/ok") },
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = exec("/ok") }},
		{name: "that probe changed",
			old:    func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = exec("/ok") },
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = exec("/other") },
			want:   []string{"spec.containers[0].livenessProbe"}},
		{name: "that probe removed",
			old:    func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = exec("/ok") },
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = nil }},
		{name: "OpenKruise's probe context", old: func(p *corev1.Pod) {
			p.Annotations = map[string]string{appsv1alpha1.AnnotationKruiseProbeContext: ctx}
		}, mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = exec("/ok") },
			want: []string{"spec.containers[0].livenessProbe"}},
		{name: "pod not enrolled", old: func(p *corev1.Pod) { delete(p.Labels, appsv1alpha1.LabelEnrolled) },
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = exec("/ok") }},
		{name: "probe context that does not decode", old: func(p *corev1.Pod) { p.Annotations[appsv1alpha1.AnnotationProbeContext] = "{" },
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = exec("/ok") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldPod := base()
			if tc.old != nil {
				tc.old(oldPod)
			}
			newPod := oldPod.DeepCopy()
			tc.mutate(newPod)
			errs := NativeProbeChanges(oldPod, newPod)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
				if want := e.Field + ": Forbidden: " + EnrolledProbeRule; e.Error() != want {
					t.Errorf("error %q, want %q", e.Error(), want)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("fields %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("fields %v, want %v", got, tc.want)
				}
			}
		})
	}
}
