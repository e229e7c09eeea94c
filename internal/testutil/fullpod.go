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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// FullPod is an enrolled pod as a cluster returns it: a probed sidecar with a named port, an
// app container, managed fields, foreign annotations and a full status.
func FullPod() *corev1.Pod {
	now := metav1.Now()
	always := corev1.ContainerRestartPolicyAlways
	ctx := `[{"name":"proxy","livenessProbe":{"tcpSocket":{"port":"admin"}}},` +
		`{"name":"app","livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5}}]`
	ctr := func(name string, port string, n int32) corev1.Container {
		return corev1.Container{Name: name, Image: "registry.example/" + name + ":1", Command: []string{"/bin/" + name},
			Ports: []corev1.ContainerPort{{Name: port, ContainerPort: n, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString(port)}}},
			VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/" + name}},
		}
	}
	proxy := ctr("proxy", "admin", 9901)
	proxy.RestartPolicy = &always
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "uid-1", ResourceVersion: "42",
			Labels: map[string]string{"app": "web", appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue},
			Annotations: map[string]string{
				appsv1alpha1.AnnotationProbeContext:      ctx,
				appsv1alpha1.AnnotationEnabled:           appsv1alpha1.TrueValue,
				appsv1alpha1.AnnotationRestartDisabled:   appsv1alpha1.TrueValue,
				appsv1alpha1.AnnotationKruiseEnabled:     appsv1alpha1.TrueValue,
				"crr.enhancedliveness.io/probe":          "kept: a subdomain of the operator's",
				"kubectl.kubernetes.io/restartedAt":      "2026-11-30T00:00:00Z",
				"sidecar.istio.io/status":                `{"initContainers":["istio-init"]}`,
				"notenhancedliveness.io/x":               "dropped: not the operator's domain",
				"kubectl.kubernetes.io/last-applied-cfg": "{}",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7c9d",
				UID: "rs-1", Controller: ptr.To(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec: corev1.PodSpec{
			NodeName: "n1", RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To[int64](45),
			InitContainers:     []corev1.Container{proxy, ctr("migrate", "unused", 1)},
			Containers:         []corev1.Container{ctr("app", "http", 8080)},
			Volumes:            []corev1.Volume{{Name: "config"}},
			ServiceAccountName: "web", Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.7", HostIP: "192.168.0.1", QOSClass: corev1.PodQOSBurstable,
			PodIPs:     []corev1.PodIP{{IP: "10.0.0.7"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", Message: "a long termination message"}}},
				{Name: "proxy", ContainerID: "containerd://p1", State: running, Ready: true, Started: ptr.To(true),
					RestartCount: 2, Image: "registry.example/proxy:1", ImageID: "sha256:1"},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://a1", State: running,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "oom"}},
				Ready:                true, RestartCount: 1, Image: "registry.example/app:1", ImageID: "sha256:2"}},
		},
	}
}
