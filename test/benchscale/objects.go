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

package main

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// layout places pods: workload w has perWorkload pods, pod i of it is pod number
// g = w*perWorkload+i and runs on node g mod nodes, so a workload's pods are on distinct nodes
// and every node has the same number of pods. Workloads are spread over the namespaces.
type layout struct {
	pods, perWorkload, workloads, nodes, namespaces int
}

// What every generated workload shares: its app container, its probe path and its name label.
const (
	appContainer = "app"
	healthzPath  = "/healthz"
	labelName    = "app.kubernetes.io/name"
)

func newLayout(pods, perWorkload, perNode, namespaces int) (layout, error) {
	l := layout{pods: pods, perWorkload: perWorkload, workloads: pods / perWorkload, nodes: pods / perNode,
		namespaces: namespaces}
	switch {
	case pods%perWorkload != 0 || pods%perNode != 0:
		return l, fmt.Errorf("%d pods do not divide into workloads of %d and nodes of %d", pods, perWorkload, perNode)
	case l.nodes < perWorkload:
		return l, fmt.Errorf("%d nodes cannot hold a workload of %d on distinct nodes", l.nodes, perWorkload)
	case l.workloads < namespaces:
		return l, fmt.Errorf("%d workloads for %d namespaces", l.workloads, namespaces)
	}
	return l, nil
}

func (l layout) namespace(w int) string  { return fmt.Sprintf("bench-%02d", w%l.namespaces) }
func (l layout) workload(w int) string   { return fmt.Sprintf("app-%04d", w) }
func (l layout) replicaSet(w int) string { return l.workload(w) + "-7c9d5b8f4d" }
func (l layout) nodeName(n int) string   { return fmt.Sprintf("node-%05d", n) }
func (l layout) podName(w, i int) string { return fmt.Sprintf("%s-%05d", l.replicaSet(w), i) }
func (l layout) node(w, i int) int       { return (w*l.perWorkload + i) % l.nodes }

// podIP is unique per pod number: 10.0.0.0/8 holds 16 million.
func podIP(g int) string { return fmt.Sprintf("10.%d.%d.%d", g>>16&0xff, g>>8&0xff, g&0xff) }

// podRec is what the benchmark remembers of a pod it created.
type podRec struct {
	ns, name string
	uid      types.UID
	w, node  int
	ip       string
	gen      int // running container instance, bumped when the simulated kubelet restarts it
}

func (p *podRec) containerID() string { return fmt.Sprintf("containerd://%s-%d", p.uid, p.gen) }

// livenessProbe is the probe the webhook moved into the annotation: HTTP on the named port.
var livenessProbe = corev1.Probe{
	ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: healthzPath, Port: intstr.FromString("http")}},
	PeriodSeconds:    10,
	FailureThreshold: 3,
}

// The port the mapping controller must resolve "http" to.
const appPort = 8080

// appName is the name of the application the benchmark's workloads make up (its label
// app.kubernetes.io/part-of, its ServiceAccount, the namespace of -status-writes' pods).
const appName = "shop"

// podTemplate is a pod of a typical web Deployment after the operator's webhook: an app
// container (its liveness probe moved into the probe-context annotation) and a proxy sidecar,
// with the env, resources, probes, volumes and tolerations such pods carry. The benchmark's
// memory figures depend on it; the cache transform keeps a small part of it.
func (l layout) podTemplate(w int) corev1.PodTemplateSpec {
	// The annotation's documented format (docs/webhooks.md), as the webhook writes it.
	pctx, err := json.Marshal([]map[string]any{{"name": appContainer, "livenessProbe": livenessProbe}})
	if err != nil {
		panic(err)
	}
	labels := map[string]string{labelName: l.workload(w), "app.kubernetes.io/part-of": appName,
		"pod-template-hash": "7c9d5b8f4d", appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue}
	res := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	env := []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "LOG_LEVEL", Value: "info"}, {Name: "HTTP_PORT", Value: "8080"},
		{Name: "DATABASE_URL", Value: "postgres://shop@db.shop.svc:5432/shop?sslmode=require"},
		{Name: "CACHE_URL", Value: "redis://cache.shop.svc:6379/0"},
	}
	mounts := []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"},
		{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
	secCtx := &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true),
		ReadOnlyRootFilesystem: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	app := corev1.Container{Name: appContainer, Image: "registry.example/shop/" + l.workload(w) + ":1.42.0",
		Args:  []string{"--config=/etc/app/config.yaml", "--listen=:8080"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: appPort}, {Name: "metrics", ContainerPort: 9090}},
		Env:   env, Resources: res("250m", "512Mi"), VolumeMounts: mounts, SecurityContext: secCtx,
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/ready", Port: intstr.FromString("http")}}, PeriodSeconds: 5},
		ImagePullPolicy: corev1.PullIfNotPresent}
	proxy := corev1.Container{Name: "proxy", Image: "registry.example/proxy:1.31.2",
		Args:  []string{"proxy", "--upstream=127.0.0.1:8080", "--listen=:8443"},
		Ports: []corev1.ContainerPort{{Name: "https", ContainerPort: 8443}},
		Env:   env[:2], Resources: res("100m", "128Mi"), VolumeMounts: mounts[1:], SecurityContext: secCtx,
		ImagePullPolicy: corev1.PullIfNotPresent}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
			appsv1alpha1.AnnotationEnabled: appsv1alpha1.TrueValue, appsv1alpha1.AnnotationProbeContext: string(pctx),
			"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{app, proxy},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: l.workload(w) + "-config"}}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
							Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
					}}}},
			},
			ServiceAccountName: appName,
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
				WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					labelName: l.workload(w)}}}},
		},
	}
}

// runningStatus is the pod status a kubelet writes for a pod whose containers run as instance
// p.gen and are Ready.
func runningStatus(p *podRec, nodeIP string) corev1.PodStatus {
	now := metav1.Now()
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
	}
	cs := func(name, image string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, Image: image, ImageID: image + "@sha256:4f1e6b2c9a7d", Ready: true,
			Started: ptr.To(true), RestartCount: int32(p.gen - 1),
			ContainerID: fmt.Sprintf("containerd://%s-%s-%d", p.uid, name, p.gen),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}
	}
	app := cs(appContainer, "registry.example/shop/app:1.42.0")
	app.ContainerID = p.containerID()
	return corev1.PodStatus{Phase: corev1.PodRunning, HostIP: nodeIP, HostIPs: []corev1.HostIP{{IP: nodeIP}},
		PodIP: p.ip, PodIPs: []corev1.PodIP{{IP: p.ip}}, StartTime: &now, QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{cond("PodReadyToStartContainers"), cond(corev1.PodInitialized),
			cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodScheduled)},
		ContainerStatuses: []corev1.ContainerStatus{app, cs("proxy", "registry.example/proxy:1.31.2")}}
}

func nodeIP(n int) string { return fmt.Sprintf("192.168.%d.%d", n>>8&0xff, n&0xff) }

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}
