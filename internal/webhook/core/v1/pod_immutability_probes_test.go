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

package v1

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// Pod probes are immutable up to Kubernetes 1.37, and the API server refuses a probe change
// before any admission webhook sees it; where the MutableContainerProbes feature gate lets probes
// change in place, a native livenessProbe put back on an enrolled container would be run by the
// kubelet beside the operator. The handler's decision is tested on admission requests.
func TestPodUpdateRefusesANativeProbeOnAnEnrolledContainer(t *testing.T) {
	probe := func(cmd string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{cmd}}}}
	}
	enrolled := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0",
			Labels: map[string]string{appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue},
			Annotations: map[string]string{appsv1alpha1.AnnotationEnabled: "true", appsv1alpha1.AnnotationProbeContext: `[` +
				`{"name":"proxy","livenessProbe":{"exec":{"command":["/proxy-ok"]}}},` +
				`{"name":"web","livenessProbe":{"exec":{"command":["/ok"]}}}]`}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "proxy", Image: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
			Containers:     []corev1.Container{{Name: "web", Image: "web"}, {Name: "metrics", Image: "metrics"}},
		},
	}
	handler := admission.WithValidator(testutil.Scheme(), &PodImmutability{OperatorNamespace: "operator", OperatorUsername: operatorUser})
	for _, tc := range []struct {
		name   string
		user   string
		mutate func(p *corev1.Pod)
		denied []string // fields the denial names; none: allowed
	}{
		{name: "a native probe on the enrolled container", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = probe("/ok") },
			denied: []string{"spec.containers[0].livenessProbe"}},
		{name: "on the enrolled sidecar too, with a label change", mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers[0].LivenessProbe = probe("/proxy-ok")
			p.Labels["tier"] = "web"
		}, denied: []string{"spec.initContainers[0].livenessProbe"}},
		{name: "along with a protected annotation", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = probe("/ok")
			p.Annotations[appsv1alpha1.AnnotationEnabled] = "false"
		}, denied: []string{probecontext.AnnotationPath(appsv1alpha1.AnnotationEnabled).String(), "spec.containers[0].livenessProbe"}},
		{name: "a probe on a container the context does not hold", mutate: func(p *corev1.Pod) { p.Spec.Containers[1].LivenessProbe = probe("/m") }},
		{name: "a readiness probe on the enrolled container", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe = probe("/ready") }},
		{name: "by the operator", user: operatorUser, mutate: func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = probe("/ok") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newPod := enrolled.DeepCopy()
			tc.mutate(newPod)
			user := tc.user
			if user == "" {
				user = "alice"
			}
			resp := handler.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				UID: "req-1", Operation: admissionv1.Update, Namespace: "shop", Name: "web-0",
				Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
				UserInfo:  authenticationv1.UserInfo{Username: user},
				Object:    raw(t, newPod),
				OldObject: raw(t, enrolled),
			}})
			if len(tc.denied) == 0 {
				if !resp.Allowed {
					t.Fatalf("denied: %v", resp.Result)
				}
				return
			}
			if resp.Allowed || resp.Result.Code != http.StatusForbidden {
				t.Fatalf("allowed %v, result %+v; want 403", resp.Allowed, resp.Result)
			}
			msg := resp.Result.Message
			if !strings.HasPrefix(msg, `pods "web-0" is forbidden: `) {
				t.Errorf("message %q does not name the pod", msg)
			}
			for _, f := range tc.denied {
				rule := probecontext.EnrolledProbeRule
				if strings.HasPrefix(f, "metadata.") {
					rule = probecontext.ImmutableRule
				}
				if !strings.Contains(msg, f+": Forbidden: "+rule) {
					t.Errorf("message %q does not name %s and its rule", msg, f)
				}
			}
		})
	}
}

func raw(t *testing.T, obj runtime.Object) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}
