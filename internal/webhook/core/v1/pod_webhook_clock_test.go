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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// The admission signature's issue time is compared with the pod's creationTimestamp, which the
// API server stamps on its own clock. A manager whose clock is minutes from the API server's
// still enrolls pods whose signatures verify; one that has not measured the API server's clock
// keeps the pod's native probe, with a warning, never leaving it without one.
func TestAdmissionIsIssuedOnTheAPIServersClock(t *testing.T) {
	apiNow := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		skew     time.Duration // the manager's clock minus the API server's
		measured bool
	}{
		{"manager 6 minutes behind", -6 * time.Minute, true},
		{"manager 6 minutes ahead", 6 * time.Minute, true},
		{"API server's clock not measured", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local := clocktesting.NewFakeClock(apiNow.Add(tc.skew))
			clk := apiclock.New(local)
			if tc.measured {
				// One response: sent and received 20 ms apart, the API server's Date in between.
				sent := local.Now()
				local.Step(20 * time.Millisecond)
				clk.Observe(sent, local.Now(), apiNow)
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: map[string]string{appsv1alpha1.AnnotationEnabled: "true"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app",
					LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/check"}}}}}}},
			}
			// No policy in the namespace: the pod is admitted in Enforce mode.
			d := &PodDefaulter{OperatorNamespace: "operator", Keys: testutil.StaticKeys{}, Clock: clk,
				Policies: fake.NewClientBuilder().WithScheme(testutil.Scheme()).Build()}
			wl := &warningList{}
			if err := d.Default(context.WithValue(context.Background(), warningsKey{}, wl), pod); err != nil {
				t.Fatal(err)
			}
			if !tc.measured {
				if pod.Spec.Containers[0].LivenessProbe == nil || pod.Labels[appsv1alpha1.LabelEnrolled] != "" {
					t.Fatalf("not measured: the pod lost its native probe (labels %v)", pod.Labels)
				}
				if len(wl.list) != 1 || !strings.Contains(wl.list[0], "keeps its native livenessProbes") {
					t.Fatalf("warnings = %q", wl.list)
				}
				return
			}
			if pod.Spec.Containers[0].LivenessProbe != nil {
				t.Fatal("the pod was not enrolled")
			}
			// The API server stamps the pod a moment after its admission.
			pod.CreationTimestamp = metav1.NewTime(apiNow.Add(time.Second))
			if _, err := signature.VerifyAdmission(testutil.TrustedKeys(), pod); err != nil {
				t.Fatalf("the admission does not verify: %v", err)
			}
		})
	}
}
