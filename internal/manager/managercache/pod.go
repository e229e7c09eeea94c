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

package managercache

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// fieldRule is what StripPod keeps of one struct type: only the fields named in only, or every
// field but those in except.
type fieldRule struct{ only, except []string }

// keptPodFields declares, by the struct type that holds them, the fields of a pod that StripPod
// keeps; a type it does not list is kept whole wherever a kept field leads to it (a
// PodCondition, a ContainerPort). Annotations are kept only for the operator's own keys
// (operatorAnnotation). TestStripPodKeepsExactlyTheDeclaredFields holds StripPod to it, and
// TestManagerReadsOnlyKeptPodFields holds the manager's controllers to it: a controller that
// starts reading another pod field fails that test until the field is kept here and in StripPod.
var keptPodFields = map[reflect.Type]fieldRule{
	reflect.TypeFor[metav1.ObjectMeta](): {except: []string{"ManagedFields"}},
	reflect.TypeFor[corev1.PodSpec](): {only: []string{"NodeName", "RestartPolicy", "TerminationGracePeriodSeconds",
		"InitContainers", "Containers"}},
	// Ports resolve named probe ports; RestartPolicy tells sidecars.
	reflect.TypeFor[corev1.Container](): {only: []string{"Name", "Ports", "RestartPolicy"}},
	reflect.TypeFor[corev1.PodStatus](): {only: []string{"Phase", "PodIP", "Conditions", "InitContainerStatuses",
		"ContainerStatuses"}},
	// Of the conditions only Ready is kept (podutil.IsReady), and of it only whether it holds:
	// the kubelet's five conditions with their times were a sixth of a cached pod.
	reflect.TypeFor[corev1.PodCondition](): {only: []string{"Type", "Status"}},
	reflect.TypeFor[corev1.ContainerStatus](): {only: []string{"Name", "ContainerID", "State", "Ready", "Started",
		"RestartCount"}},
	// Messages (up to 4 KiB each) are dropped.
	reflect.TypeFor[corev1.ContainerStateWaiting](): {only: []string{"Reason"}},
	reflect.TypeFor[corev1.ContainerStateTerminated](): {only: []string{"ExitCode", "Signal", "Reason", "StartedAt",
		"FinishedAt", "ContainerID"}},
}

// StripPod is the manager cache's transform for Pods. The manager caches every enrolled pod of
// the cluster, and what it reads of them is small, so everything else is dropped before the pod
// enters the cache (keptPodFields says what stays):
//
//   - metadata: all but managedFields, and annotations other than the operator's own
//     (enhancedliveness.io and its subdomains) and OpenKruise's two keys that the operator reads;
//   - spec: nodeName, restartPolicy, terminationGracePeriodSeconds, and of each container and
//     init container only name, ports (named-port resolution) and restartPolicy (sidecars);
//   - status: phase, podIP, the Ready condition's status, and of each container status name, containerID, state
//     (without the termination or waiting message), ready, started and restartCount.
//
// The readers are the probe-mapping controller (labels, the probe-context annotation, nodeName,
// podIP, phase, containers), the decision and policy-status controllers (labels, the
// restart-disabled annotation, owner references, nodeName, the Ready condition, container
// states), the CRR webhook (container IDs and restart counts) and the CRR lifecycle controller
// (deletions only; it reads pods with the API reader).
//
// The transform is idempotent (informers may apply it to an object twice) and leaves other types
// (e.g. a tombstone) alone.
func StripPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.ManagedFields = nil
	pod.Namespace, pod.GenerateName = strs.str(pod.Namespace), strs.str(pod.GenerateName)
	pod.Labels = sharedLabels(pod.Labels)
	pod.Annotations = operatorAnnotations(pod.Annotations)
	pod.OwnerReferences = sharedOwners(pod.OwnerReferences)
	pod.Spec = corev1.PodSpec{
		NodeName:                      strs.str(pod.Spec.NodeName),
		RestartPolicy:                 corev1.RestartPolicy(strs.str(string(pod.Spec.RestartPolicy))),
		TerminationGracePeriodSeconds: pod.Spec.TerminationGracePeriodSeconds,
		InitContainers:                strippedContainers(pod.Spec.InitContainers),
		Containers:                    strippedContainers(pod.Spec.Containers),
	}
	pod.Status = corev1.PodStatus{
		Phase:                 corev1.PodPhase(strs.str(string(pod.Status.Phase))),
		PodIP:                 pod.Status.PodIP,
		Conditions:            readyCondition(pod.Status.Conditions),
		InitContainerStatuses: strippedStatuses(pod.Status.InitContainerStatuses),
		ContainerStatuses:     strippedStatuses(pod.Status.ContainerStatuses),
	}
	return pod, nil
}

// strs interns the strings of cached pods that replicas share (interner).
var strs interner

// sharedLabel reports whether a label's value is usually the same for many pods; the values of
// the labels that name one pod are not interned.
func sharedLabel(key string) bool {
	switch key {
	case "statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index",
		"batch.kubernetes.io/job-completion-index":
		return false
	}
	return true
}

// The Ready conditions StripPod keeps, shared by every cached pod (read only, as every cached
// object).
var (
	readyTrue    = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	readyFalse   = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	readyUnknown = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionUnknown}}
)

// readyCondition keeps the pod's Ready condition, type and status only; nil when it has none.
func readyCondition(in []corev1.PodCondition) []corev1.PodCondition {
	for i := range in {
		if in[i].Type == corev1.PodReady {
			switch in[i].Status {
			case corev1.ConditionTrue:
				return readyTrue
			case corev1.ConditionFalse:
				return readyFalse
			case corev1.ConditionUnknown:
				return readyUnknown
			}
			return []corev1.PodCondition{{Type: corev1.PodReady, Status: in[i].Status}}
		}
	}
	return nil
}

// operatorAnnotations keeps the annotations the operator defines or reads; nil when none is left.
func operatorAnnotations(in map[string]string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if !operatorAnnotation(k) {
			continue
		}
		if out == nil {
			out = make(map[string]string, 4)
		}
		if sharedAnnotation(k) {
			v = strs.str(v)
		}
		out[strs.str(k)] = v
	}
	return out
}

// sharedAnnotation reports whether an operator annotation's value is the same for every replica
// (the probe context and the switches); signatures and seals are one pod's own.
func sharedAnnotation(key string) bool {
	switch key {
	case appsv1alpha1.AnnotationProbeContextSignature, appsv1alpha1.AnnotationProbeContextSeal:
		return false
	}
	return true
}

func operatorAnnotation(key string) bool {
	switch key {
	case appsv1alpha1.AnnotationKruiseProbeContext, appsv1alpha1.AnnotationKruiseEnabled:
		return true
	}
	prefix, _, ok := strings.Cut(key, "/")
	return ok && (prefix == "enhancedliveness.io" || strings.HasSuffix(prefix, ".enhancedliveness.io"))
}

// strippedContainers keeps of each container its name, ports and restart policy: the same for
// every replica of a workload, so replicas share one slice (containerLists).
func strippedContainers(in []corev1.Container) []corev1.Container {
	if in == nil {
		return nil
	}
	var key strings.Builder
	for i := range in {
		c := &in[i]
		fmt.Fprintf(&key, "%s\x00%s\x00", c.Name, restartPolicyString(c.RestartPolicy))
		for _, p := range c.Ports {
			fmt.Fprintf(&key, "%s\x00%d\x00%s\x00%d\x00%s\x00", p.Name, p.ContainerPort, p.Protocol, p.HostPort, p.HostIP)
		}
		key.WriteByte(1)
	}
	return containerLists.get(key.String(), func() []corev1.Container {
		out := make([]corev1.Container, len(in))
		for i := range in {
			out[i] = corev1.Container{Name: strs.str(in[i].Name), Ports: in[i].Ports, RestartPolicy: in[i].RestartPolicy}
			for j := range out[i].Ports {
				p := &out[i].Ports[j]
				p.Name, p.Protocol = strs.str(p.Name), corev1.Protocol(strs.str(string(p.Protocol)))
			}
		}
		return out
	})
}

func restartPolicyString(p *corev1.ContainerRestartPolicy) string {
	if p == nil {
		return "nil"
	}
	return string(*p)
}

func strippedStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	if in == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i := range in {
		s := &in[i]
		out[i] = corev1.ContainerStatus{Name: strs.str(s.Name), ContainerID: s.ContainerID, State: strippedState(s.State),
			Ready: s.Ready, Started: s.Started, RestartCount: s.RestartCount}
	}
	return out
}

func strippedState(in corev1.ContainerState) corev1.ContainerState {
	out := corev1.ContainerState{Running: in.Running}
	if w := in.Waiting; w != nil {
		out.Waiting = &corev1.ContainerStateWaiting{Reason: strs.str(w.Reason)}
	}
	if t := in.Terminated; t != nil {
		out.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Signal: t.Signal, Reason: strs.str(t.Reason),
			StartedAt: t.StartedAt, FinishedAt: t.FinishedAt, ContainerID: t.ContainerID}
	}
	return out
}
