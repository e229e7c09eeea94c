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
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// The probe mapping of a stripped pod is the mapping of the whole pod, and the probes the
// manager's decision reads from it are the ones the daemon reads from the whole pod: named ports
// of the app container and of the sidecar resolve, and the probe-context annotation, its
// admission signature and its seal survive (a stripped pod whose seal no longer verified would
// not be probed at all).
func TestStripPodKeepsTheMapping(t *testing.T) {
	full := testutil.FullPod()
	full.CreationTimestamp = metav1.Now()
	testutil.Seal(testutil.Admit(full))
	trust := func(p *corev1.Pod) error {
		if _, err := signature.VerifyAdmission(testutil.TrustedKeys(), p); err != nil {
			return err
		}
		_, err := signature.VerifySeal(testutil.TrustedKeys(), p)
		return err
	}
	stripped, _ := managercache.StripPod(full.DeepCopy())
	want, wantProblems, _ := desiredPodProbes([]corev1.Pod{*full}, trust)
	got, gotProblems, _ := desiredPodProbes([]corev1.Pod{*stripped.(*corev1.Pod)}, trust)
	if len(wantProblems) != 0 || len(gotProblems) != 0 {
		t.Fatalf("problems: full %v, stripped %v", wantProblems, gotProblems)
	}
	if len(want) != 1 || !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("stripped pod maps to %+v, want %+v", got, want)
	}
	wantProbes, _, err := probecontext.PodProbes(full)
	if err != nil || len(wantProbes) != 2 {
		t.Fatalf("the whole pod has probes %+v (%v), want two", wantProbes, err)
	}
	gotProbes, _, err := probecontext.PodProbes(stripped.(*corev1.Pod))
	if err != nil || !equality.Semantic.DeepEqual(gotProbes, wantProbes) {
		t.Errorf("the stripped pod has probes %+v (%v), want %+v", gotProbes, err, wantProbes)
	}
}
