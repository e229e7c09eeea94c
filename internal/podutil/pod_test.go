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

package podutil

import (
	"cmp"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func testPod() *corev1.Pod {
	return &corev1.Pod{
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				{Name: "setup"},
				{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
			},
			Containers: []corev1.Container{
				{Name: "app", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}},
				{Name: "worker"},
			},
		},
		Status: corev1.PodStatus{
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "proxy", ContainerID: "containerd://p1", RestartCount: 2,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}},
			},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", ContainerID: "containerd://a1", RestartCount: 1,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}},
				{Name: "worker", ContainerID: "containerd://w1", RestartCount: 4,
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}},
			},
		},
	}
}

func TestRestartableContainers(t *testing.T) {
	pod := testPod()
	got := RestartableContainers(&pod.Spec)
	want := []struct {
		name, path string
		sidecar    bool
	}{{"proxy", "spec.initContainers[1]", true}, {"app", "spec.containers[0]", false}, {"worker", "spec.containers[1]", false}}
	if len(got) != len(want) {
		t.Fatalf("got %d containers, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Container.Name != w.name || got[i].Path.String() != w.path || got[i].Sidecar != w.sidecar {
			t.Errorf("entry %d: got %s %s %v, want %+v", i, got[i].Container.Name, got[i].Path, got[i].Sidecar, w)
		}
	}
	// Entries point into the spec.
	got[1].Container.Image = "edited"
	if pod.Spec.Containers[0].Image != "edited" {
		t.Error("RestartableContainers must point into the spec")
	}
}

func TestFindAndStatus(t *testing.T) {
	pod := testPod()
	for _, tc := range []struct {
		name          string
		restartable   bool
		init          bool
		runningID     string
		restarts      int32
		statusPresent bool
	}{
		{name: "app", restartable: true, runningID: "containerd://a1", restarts: 1, statusPresent: true},
		{name: "proxy", restartable: true, init: true, runningID: "containerd://p1", restarts: 2, statusPresent: true},
		{name: "worker", restartable: true, runningID: "", restarts: 4, statusPresent: true},
		{name: "setup", restartable: false, init: true},
		{name: "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := FindRestartable(&pod.Spec, tc.name); ok != tc.restartable {
				t.Errorf("FindRestartable = %v, want %v", ok, tc.restartable)
			}
			if got := IsInitContainer(&pod.Spec, tc.name); got != tc.init {
				t.Errorf("IsInitContainer = %v, want %v", got, tc.init)
			}
			if got := ContainerStatus(pod, tc.name) != nil; got != tc.statusPresent {
				t.Errorf("ContainerStatus present = %v, want %v", got, tc.statusPresent)
			}
			id, n := RunningContainerID(pod, tc.name)
			if id != tc.runningID || n != tc.restarts {
				t.Errorf("RunningContainerID = %q, %d; want %q, %d", id, n, tc.runningID, tc.restarts)
			}
		})
	}
}

func TestIsReady(t *testing.T) {
	pod := testPod()
	if !IsReady(pod) {
		t.Error("Ready=True must be ready")
	}
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	if IsReady(pod) {
		t.Error("Ready=False must not be ready")
	}
	pod.Status.Conditions = nil
	if IsReady(pod) {
		t.Error("no Ready condition must not be ready")
	}
}

func TestResolvePort(t *testing.T) {
	app := &testPod().Spec.Containers[0]
	for _, tc := range []struct {
		name    string
		port    intstr.IntOrString
		c       *corev1.Container
		want    int
		wantErr string
	}{
		{name: "number", port: intstr.FromInt32(9090), c: app, want: 9090},
		{name: "named", port: intstr.FromString("http"), c: app, want: 8080},
		{name: "unknown name", port: intstr.FromString("metrics"), c: app, wantErr: `port "metrics" not found`},
		{name: "no container", port: intstr.FromString("http"), wantErr: `port "http" not found`},
		{name: "zero", port: intstr.FromInt32(0), c: app, wantErr: "invalid port number: 0"},
		{name: "too big", port: intstr.FromInt32(65536), c: app, wantErr: "invalid port number: 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolvePort(tc.port, tc.c)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ResolvePort = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestRestartedAfterStop(t *testing.T) {
	always, onFailure, never := ptr.To(corev1.ContainerRestartPolicyAlways),
		ptr.To(corev1.ContainerRestartPolicyOnFailure), ptr.To(corev1.ContainerRestartPolicyNever)
	cases := []struct {
		name      string
		pod       corev1.RestartPolicy
		container *corev1.ContainerRestartPolicy
		want      bool
		policy    corev1.RestartPolicy // RestartPolicyAfterStop of the regular container; Always when unset
	}{
		{name: "Always pod", pod: corev1.RestartPolicyAlways, want: true},
		{name: "unset pod policy defaults to Always", pod: "", want: true},
		{name: "OnFailure pod", pod: corev1.RestartPolicyOnFailure, want: false, policy: corev1.RestartPolicyOnFailure},
		{name: "Never pod", pod: corev1.RestartPolicyNever, want: false, policy: corev1.RestartPolicyNever},
		{name: "container Always in a Never pod", pod: corev1.RestartPolicyNever, container: always, want: true},
		{name: "container OnFailure in an Always pod", pod: corev1.RestartPolicyAlways, container: onFailure, want: false,
			policy: corev1.RestartPolicyOnFailure},
		{name: "container Never in an Always pod", pod: corev1.RestartPolicyAlways, container: never, want: false,
			policy: corev1.RestartPolicyNever},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := testPod()
			p.Spec.RestartPolicy = tc.pod
			p.Spec.Containers[0].RestartPolicy = tc.container
			rc, _ := FindRestartable(&p.Spec, "app")
			if got := RestartedAfterStop(&p.Spec, rc); got != tc.want {
				t.Errorf("regular container: got %t, want %t", got, tc.want)
			}
			if got, want := RestartPolicyAfterStop(&p.Spec, rc), cmp.Or(tc.policy, corev1.RestartPolicyAlways); got != want {
				t.Errorf("regular container's policy after a stop: %s, want %s", got, want)
			}
			// A sidecar is restarted after a stop whatever the pod's policy.
			sc, _ := FindRestartable(&p.Spec, "proxy")
			if !RestartedAfterStop(&p.Spec, sc) || RestartPolicyAfterStop(&p.Spec, sc) != corev1.RestartPolicyAlways {
				t.Error("sidecar not restarted after a stop")
			}
		})
	}
}
