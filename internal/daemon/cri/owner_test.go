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

package cri_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

func TestCheckOwner(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}
	// A mirror pod's UID is the API server's; the kubelet labels its containers with the static
	// pod's, which the mirror annotation names.
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "api-uid", Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "static-uid"}}}
	labels := func(uid, name string) map[string]string {
		return map[string]string{cri.LabelPodUID: uid, cri.LabelContainerName: name}
	}
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		labels map[string]string
		cause  string // empty: the pod's
	}{
		{"the pod's container", pod, labels("uid-1", "app"), ""},
		{"another pod's container", pod, labels("uid-2", "app"), cri.CausePodUID},
		{"another container of the pod", pod, labels("uid-1", "side"), cri.CauseContainerName},
		{"no labels", pod, nil, cri.CauseUnlabelled},
		{"no container name", pod, map[string]string{cri.LabelPodUID: "uid-1"}, cri.CauseUnlabelled},
		{"a static pod's container, by its mirror pod", mirror, labels("static-uid", "app"), ""},
		{"the mirror's own UID is not the static pod's", mirror, labels("api-uid", "app"), ""},
		{"another static pod's container", mirror, labels("static-2", "app"), cri.CausePodUID},
		{"an empty label is nobody's", &corev1.Pod{}, labels("", "app"), cri.CauseUnlabelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := cri.CheckOwner(&runtimeapi.ContainerStatus{Id: "c1", Labels: tc.labels}, cri.PodOwner(tc.pod, "app"))
			no := cri.AsNotOwned(err)
			switch {
			case tc.cause == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.cause != "" && (no == nil || no.Cause != tc.cause):
				t.Fatalf("err = %v, want cause %s", err, tc.cause)
			}
		})
	}
}
