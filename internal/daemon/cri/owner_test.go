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
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

func TestCheckOwner(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}
	// A mirror pod's UID is the API server's; the kubelet labels its containers with the static
	// pod's, which the mirror annotation names, and with the mirror pod's namespace and name.
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "etcd-node1", UID: "api-uid",
		Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "static-uid"}}}
	// Whoever creates a pod writes its annotations: a pod of a tenant's namespace claiming to be
	// that static pod's mirror.
	claims := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "etcd-node1", UID: "uid-t",
		Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "static-uid"}}}
	labels := func(uid, name string) map[string]string {
		return map[string]string{cri.LabelPodUID: uid, cri.LabelContainerName: name}
	}
	static := func(namespace, pod string) map[string]string {
		l := labels("static-uid", "app")
		l[cri.LabelPodNamespace], l[cri.LabelPodName] = namespace, pod
		return l
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
		{"a static pod's container, by its mirror pod", mirror, static("kube-system", "etcd-node1"), ""},
		{"the mirror's own UID is not the static pod's", mirror, labels("api-uid", "app"), ""},
		{"another static pod's container", mirror, labels("static-2", "app"), cri.CausePodUID},
		{"a static pod's container, by a pod claiming to be its mirror", claims, static("kube-system", "etcd-node1"), cri.CauseMirror},
		{"a static pod's container labelled with another name", mirror, static("kube-system", "etcd-node2"), cri.CauseMirror},
		{"a static pod's container without the pod's name and namespace", mirror, labels("static-uid", "app"), cri.CauseMirror},
		{"another container of the static pod", mirror, func() map[string]string {
			l := static("kube-system", "etcd-node1")
			l[cri.LabelContainerName] = "side"
			return l
		}(), cri.CauseContainerName},
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

// The runtime resolves a unique prefix of a container ID as the whole ID: an owner check of a
// prefix says nothing of the container the prefix names tomorrow, so only the whole ID passes,
// and the refusal names neither the container it resolved to nor that container's pod.
func TestVerifyOwner(t *testing.T) {
	s := &critest.Server{}
	rt := startServer(t, s)
	s.AddContainerWithID("0123abcd", "uid-1", "app")
	s.AddContainerWithID("4567abcd", "uid-other", "app")
	s.AddContainerWithID("4567ef01", "uid-other", "side")
	want := cri.PodOwner(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}, "app")

	for _, tc := range []struct {
		name, asked, id, cause string
	}{
		{"the pod's container, by its whole ID", "containerd://0123abcd", "0123abcd", ""},
		{"a prefix of the pod's container ID", "containerd://0123", "", cri.CauseContainerID},
		{"a prefix of another pod's container ID", "4567a", "", cri.CauseContainerID},
		{"another pod's container, by its whole ID", "4567abcd", "", cri.CausePodUID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := cri.VerifyOwner(context.Background(), rt, tc.asked, want)
			no := cri.AsNotOwned(err)
			switch {
			case tc.cause == "" && (err != nil || id != tc.id):
				t.Fatalf("VerifyOwner = %q, %v; want %q", id, err, tc.id)
			case tc.cause != "" && (no == nil || no.Cause != tc.cause || id != ""):
				t.Fatalf("VerifyOwner = %q, %v; want cause %s", id, err, tc.cause)
			case tc.cause == cri.CauseContainerID && (no.ContainerID != cri.TrimContainerID(tc.asked) ||
				strings.Contains(err.Error(), "abcd") || strings.Contains(err.Error(), "uid-other")):
				t.Fatalf("message %q: must name the ID as asked, and not what it resolves to", err)
			}
		})
	}
	// A prefix of two containers' IDs is the runtime's error, not an answer.
	if id, err := cri.VerifyOwner(context.Background(), rt, "4567", want); err == nil || cri.AsNotOwned(err) != nil || id != "" {
		t.Fatalf("VerifyOwner of an ambiguous prefix = %q, %v; want the runtime's error", id, err)
	}
}
