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

package testutil

import (
	"context"
	"fmt"
	"maps"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // Create is a Ginkgo helper
	. "github.com/onsi/gomega"    //nolint:revive

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// PodBuilder builds the test pods of every suite: the spec as a workload would create it and,
// optionally, the status as the kubelet would report it (envtest has no kubelet).
type PodBuilder struct {
	pod corev1.Pod

	// status, written only when running is set
	running    bool
	ip         string
	notReady   bool
	generation int
	ids        map[string]string
	restarts   map[string]int32
	startedAt  time.Time
}

// NewPod starts a pod with one container, "app".
func NewPod(namespace, name string) *PodBuilder {
	b := &PodBuilder{generation: 1, ids: map[string]string{}, restarts: map[string]int32{}}
	b.pod.Namespace, b.pod.Name = namespace, name
	return b.Containers("app")
}

// Labels adds labels.
func (b *PodBuilder) Labels(l map[string]string) *PodBuilder {
	if b.pod.Labels == nil {
		b.pod.Labels = map[string]string{}
	}
	maps.Copy(b.pod.Labels, l)
	return b
}

// Annotations adds annotations.
func (b *PodBuilder) Annotations(a map[string]string) *PodBuilder {
	if b.pod.Annotations == nil {
		b.pod.Annotations = map[string]string{}
	}
	maps.Copy(b.pod.Annotations, a)
	return b
}

// Enrolled labels the pod as the pod webhook does for enrolled pods.
func (b *PodBuilder) Enrolled() *PodBuilder {
	return b.Labels(map[string]string{appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue})
}

// OnNode binds the pod to a node.
func (b *PodBuilder) OnNode(node string) *PodBuilder {
	b.pod.Spec.NodeName = node
	return b
}

// Containers replaces the regular containers (image registry.example/<name>:1).
func (b *PodBuilder) Containers(names ...string) *PodBuilder {
	b.pod.Spec.Containers = nil
	for _, n := range names {
		b.pod.Spec.Containers = append(b.pod.Spec.Containers, corev1.Container{Name: n, Image: image(n)})
	}
	return b
}

// Sidecars adds restartable init containers (restartPolicy: Always).
func (b *PodBuilder) Sidecars(names ...string) *PodBuilder {
	for _, n := range names {
		b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers, corev1.Container{Name: n, Image: image(n),
			RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)})
	}
	return b
}

// InitContainers adds plain init containers, which have run to completion once the pod runs.
func (b *PodBuilder) InitContainers(names ...string) *PodBuilder {
	for _, n := range names {
		b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers, corev1.Container{Name: n, Image: image(n)})
	}
	return b
}

// Port adds a named port to a container.
func (b *PodBuilder) Port(container, name string, port int32) *PodBuilder {
	return b.container(container, func(c *corev1.Container) {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: name, ContainerPort: port})
	})
}

// LivenessProbe sets a container's native liveness probe.
func (b *PodBuilder) LivenessProbe(container string, p *corev1.Probe) *PodBuilder {
	return b.container(container, func(c *corev1.Container) { c.LivenessProbe = p })
}

// ControlledBy makes the pod controlled by an owner (e.g. a ReplicaSet).
func (b *PodBuilder) ControlledBy(apiVersion, kind, name string, uid types.UID) *PodBuilder {
	b.pod.OwnerReferences = append(b.pod.OwnerReferences, metav1.OwnerReference{APIVersion: apiVersion, Kind: kind,
		Name: name, UID: uid, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)})
	return b
}

// With edits the pod directly, for what the builder does not cover.
func (b *PodBuilder) With(f func(*corev1.Pod)) *PodBuilder {
	f(&b.pod)
	return b
}

// Running reports the pod Running with ip (none when empty) and every container running, started
// and ready: instance containerd://<pod>-<container>-1 unless ContainerID or Generation say
// otherwise; plain init containers terminated with exit code 0.
func (b *PodBuilder) Running(ip string) *PodBuilder {
	b.running, b.ip = true, ip
	return b
}

// NotReady reports the pod and its containers not ready (with Running).
func (b *PodBuilder) NotReady() *PodBuilder {
	b.notReady = true
	return b
}

// Generation reports the running containers as their n-th instance (restartCount n-1).
func (b *PodBuilder) Generation(n int) *PodBuilder {
	b.generation = n
	return b
}

// ContainerID sets the reported instance of one container.
func (b *PodBuilder) ContainerID(container, id string) *PodBuilder {
	b.ids[container] = id
	return b
}

// RestartCount sets the reported restart count of one container.
func (b *PodBuilder) RestartCount(container string, n int32) *PodBuilder {
	b.restarts[container] = n
	return b
}

// StartedAt sets when the running containers started (default: now).
func (b *PodBuilder) StartedAt(t time.Time) *PodBuilder {
	b.startedAt = t
	return b
}

// ContainerIDOf is the instance ID the builder reports for a container of pod at a generation.
func ContainerIDOf(pod *corev1.Pod, container string, generation int) string {
	return fmt.Sprintf("containerd://%s-%s-%d", pod.Name, container, generation)
}

// Build returns the pod, status included.
func (b *PodBuilder) Build() *corev1.Pod {
	pod := b.pod.DeepCopy()
	if b.running {
		pod.Status = b.status(pod)
	}
	return pod
}

// Create creates the pod and, with Running, writes its status through the status subresource as
// the kubelet would. It fails the spec on error.
func (b *PodBuilder) Create(ctx context.Context, c client.Client) *corev1.Pod {
	GinkgoHelper()
	pod := b.pod.DeepCopy()
	Expect(c.Create(ctx, pod)).To(Succeed())
	if b.running {
		pod.Status = b.status(pod)
		Expect(c.Status().Update(ctx, pod)).To(Succeed())
	}
	return pod
}

func (b *PodBuilder) status(pod *corev1.Pod) corev1.PodStatus {
	started := b.startedAt
	if started.IsZero() {
		started = time.Now()
	}
	st := RunningStatus(pod, b.ip, b.generation, !b.notReady, started)
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			if id, ok := b.ids[list[i].Name]; ok {
				list[i].ContainerID = id
			}
			if n, ok := b.restarts[list[i].Name]; ok {
				list[i].RestartCount = n
			}
		}
	}
	return st
}

// RunningStatus is the status the kubelet reports for pod once it runs with IP ip (none when
// empty) and every container runs, started, as instance containerd://<pod>-<container>-<generation>
// (restartCount generation-1), ready or not, since started; plain init containers have exited 0.
// Specs that play a kubelet restarting containers write it again with the next generation.
func RunningStatus(pod *corev1.Pod, ip string, generation int, ready bool, started time.Time) corev1.PodStatus {
	cond := corev1.ConditionTrue
	if !ready {
		cond = corev1.ConditionFalse
	}
	st := corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: cond, LastTransitionTime: metav1.NewTime(started)}}}
	if ip != "" {
		st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	}
	running := func(c corev1.Container) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "sha256:0",
			ContainerID: ContainerIDOf(pod, c.Name, generation), RestartCount: int32(generation - 1), Ready: ready,
			Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			st.InitContainerStatuses = append(st.InitContainerStatuses, running(c))
			continue
		}
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: "sha256:0", ContainerID: ContainerIDOf(pod, c.Name, 1),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}})
	}
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, running(c))
	}
	return st
}

func (b *PodBuilder) container(name string, f func(*corev1.Container)) *PodBuilder {
	for _, list := range [][]corev1.Container{b.pod.Spec.Containers, b.pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				f(&list[i])
				return b
			}
		}
	}
	panic(fmt.Sprintf("testutil: the pod has no container %q", name))
}

func image(container string) string { return "registry.example/" + container + ":1" }
