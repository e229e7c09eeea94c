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

package admissionpolicy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// Pod probes are immutable up to Kubernetes 1.37: the API server refuses a probe change before
// admission, so no envtest request reaches this validation. Where the MutableContainerProbes
// feature gate lets them change, a native livenessProbe put back on an enrolled container would
// be run by the kubelet beside the operator. The policy is evaluated here as the API server's
// admission plugin evaluates it.
func TestPolicyRefusesANativeProbeOnAnEnrolledContainer(t *testing.T) {
	policy, _ := Build(Config{OperatorUsername: celOperator})
	probe := func(cmd string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{cmd}}}}
	}
	// As the webhook encodes it: the sidecar proxy and web are enrolled; web's probe sends an HTTP
	// header named like the container metrics, which is not enrolled.
	webhookContext := `[{"name":"proxy","livenessProbe":{"exec":{"command":["/proxy-ok"]}}},` +
		`{"name":"web","livenessProbe":{"httpGet":{"port":80,"httpHeaders":[{"name":"metrics","value":"x"}]}}}]`
	enrolled := func(annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0",
				Labels: map[string]string{appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue}, Annotations: annotations},
			Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "setup", Image: "setup"},
					{Name: "proxy", Image: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
				Containers: []corev1.Container{{Name: "web", Image: "web"}, {Name: "metrics", Image: "metrics"},
					{Name: "batch", Image: "batch", LivenessProbe: probe("/batch-ok")}},
			},
		}
	}
	ours := map[string]string{appsv1alpha1.AnnotationEnabled: "true", appsv1alpha1.AnnotationProbeContext: webhookContext}
	rule := probecontext.EnrolledProbeRule
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	for _, tc := range []struct {
		name        string
		old         *corev1.Pod
		mutate      func(p *corev1.Pod)
		user        string
		subresource string
		want        []string
	}{
		{name: "a native probe on the enrolled container", old: enrolled(ours),
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = probe("/ok") },
			want:   []string{"spec.containers[0].livenessProbe: Forbidden: " + rule}},
		{name: "on the enrolled sidecar and container", old: enrolled(ours), mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers[1].LivenessProbe = probe("/proxy-ok")
			p.Spec.Containers[0].LivenessProbe = probe("/ok")
		}, want: []string{"spec.initContainers[1].livenessProbe: Forbidden: " + rule + "; spec.containers[0].livenessProbe: Forbidden: " + rule}},
		{name: "on a container the context names only as an HTTP header", old: enrolled(ours),
			mutate: func(p *corev1.Pod) { p.Spec.Containers[1].LivenessProbe = probe("/m") }},
		{name: "a kept native probe changed", old: enrolled(ours),
			mutate: func(p *corev1.Pod) { p.Spec.Containers[2].LivenessProbe = probe("/batch-other") }},
		{name: "OpenKruise's context, written by hand", old: enrolled(map[string]string{appsv1alpha1.AnnotationKruiseProbeContext: "[\n" +
			`  { "livenessProbe": { "exec": { "command": ["/ok"] } }, "name" : "web" }` + "\n]"}),
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = probe("/ok") },
			want:   []string{"spec.containers[0].livenessProbe: Forbidden: " + rule}},
		{name: "ours wins over OpenKruise's", old: enrolled(map[string]string{appsv1alpha1.AnnotationProbeContext: webhookContext,
			appsv1alpha1.AnnotationKruiseProbeContext: `[{"name":"metrics","livenessProbe":{"exec":{"command":["/m"]}}}]`}),
			mutate: func(p *corev1.Pod) { p.Spec.Containers[1].LivenessProbe = probe("/m") }},
		{name: "a pod that is not enrolled", old: func() *corev1.Pod { p := enrolled(ours); p.Labels = nil; return p }(),
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = probe("/ok") }},
		{name: "by the operator", old: enrolled(ours), user: celOperator,
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = probe("/ok") }},
		{name: "a status update of a pod with a native probe beside its context", subresource: "status",
			old:    func() *corev1.Pod { p := enrolled(ours); p.Spec.Containers[0].LivenessProbe = probe("/ok"); return p }(),
			mutate: func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }},
		{name: "a protected annotation is refused as before", old: enrolled(ours),
			mutate: func(p *corev1.Pod) { p.Annotations[appsv1alpha1.AnnotationEnabled] = "false" },
			want:   []string{probecontext.AnnotationPath(appsv1alpha1.AnnotationEnabled).String() + ": Forbidden: " + probecontext.ImmutableRule}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.old.DeepCopy()
			tc.mutate(obj)
			user := tc.user
			if user == "" {
				user = "alice"
			}
			got := evaluatePolicy(t, policy, policyRequest{op: admission.Update, resource: pods, subresource: tc.subresource,
				user: user, obj: obj, old: tc.old})
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("denials:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}

	t.Run("a Binding, whose object is no pod", func(t *testing.T) {
		b := &corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"}, ObjectMeta: metav1.ObjectMeta{Name: "web-0"},
			Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
		if got := evaluatePolicy(t, policy, policyRequest{op: admission.Create, resource: pods, subresource: "binding", user: "alice", obj: b}); len(got) > 0 {
			t.Errorf("denials %q", got)
		}
	})
}
