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

package prober

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
)

func TestGate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	running := func(ago time.Duration) corev1.ContainerState {
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now.Add(-ago))}}
	}
	always := corev1.ContainerRestartPolicyAlways
	pod := func(edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			Spec: corev1.PodSpec{
				Containers:     []corev1.Container{{Name: "app"}},
				InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: &always}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", ContainerID: "containerd://c1", State: running(time.Minute), Started: new(true)},
			}},
		}
		if edit != nil {
			edit(p)
		}
		return p
	}
	app := func(edit func(*corev1.ContainerStatus)) func(*corev1.Pod) {
		return func(p *corev1.Pod) { edit(&p.Status.ContainerStatuses[0]) }
	}
	startup := &corev1.Container{Name: "app", StartupProbe: &corev1.Probe{}}
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		container string
		spec      *corev1.Container
		delay     int32
		want      verdict
		status    bool // the container's status is returned
	}{
		{name: "pod not in the cache yet", want: gateWait},
		{name: "running, started, past the initial delay", pod: pod(nil), want: gateProbe, status: true},
		{name: "#12 terminating", pod: pod(func(p *corev1.Pod) { p.DeletionTimestamp = new(metav1.NewTime(now)) }), want: gateStop},
		{name: "#12 succeeded", pod: pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), want: gateStop},
		{name: "#12 failed", pod: pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), want: gateStop},
		{name: "no status for the container yet", pod: pod(func(p *corev1.Pod) { p.Status.ContainerStatuses = nil }), want: gateWait},
		{name: "a status without a container ID", pod: pod(app(func(cs *corev1.ContainerStatus) { cs.ContainerID = "" })), want: gateWait, status: true},
		{name: "#11 waiting", pod: pod(app(func(cs *corev1.ContainerStatus) {
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		})), want: gateNotRunning, status: true},
		{name: "#11 terminated", pod: pod(app(func(cs *corev1.ContainerStatus) {
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
		})), want: gateNotRunning, status: true},
		{name: "#13 a startup probe, not started", pod: pod(app(func(cs *corev1.ContainerStatus) { cs.Started = new(false) })),
			spec: startup, want: gateWait, status: true},
		{name: "#13 a startup probe, started unknown", pod: pod(app(func(cs *corev1.ContainerStatus) { cs.Started = nil })),
			spec: startup, want: gateWait, status: true},
		{name: "#13 a startup probe, started", pod: pod(nil), spec: startup, want: gateProbe, status: true},
		{name: "#13 no startup probe: started does not matter", pod: pod(app(func(cs *corev1.ContainerStatus) { cs.Started = new(false) })),
			spec: &corev1.Container{Name: "app"}, want: gateProbe, status: true},
		{name: "#6 within the initial delay", pod: pod(app(func(cs *corev1.ContainerStatus) { cs.State = running(9 * time.Second) })),
			delay: 10, want: gateWait, status: true},
		{name: "#6 the initial delay just passed", pod: pod(app(func(cs *corev1.ContainerStatus) { cs.State = running(10 * time.Second) })),
			delay: 10, want: gateProbe, status: true},
		{name: "#6 a sidecar init container", container: "proxy", pod: pod(func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", ContainerID: "containerd://side", State: running(time.Minute)}}
		}), want: gateProbe, status: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &Target{Key: results.Key{PodUID: "u", Container: "app", Probe: "p"}, Probe: corev1.Probe{InitialDelaySeconds: tc.delay}}
			if tc.container != "" {
				tg.Container = tc.container
			}
			got, cs := gate(tc.pod, tg, tc.spec, now)
			if got != tc.want || (cs != nil) != tc.status {
				t.Fatalf("gate = %v (status %v), want %v (status %v)", got, cs != nil, tc.want, tc.status)
			}
			if cs != nil && cs.Name != tg.Container {
				t.Errorf("the status of %q returned for %q", cs.Name, tg.Container)
			}
		})
	}
}
