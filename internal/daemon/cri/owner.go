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

package cri

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Labels the kubelet puts on every container it creates, whatever the runtime; they name the
// container's pod and its name in the pod's spec.
const (
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodName       = "io.kubernetes.pod.name"
	LabelContainerName = "io.kubernetes.container.name"
)

// ReasonForeignContainer is the Warning event, on the pod, of an exec or a stop that did not run
// because the container its status names is not that pod's.
const ReasonForeignContainer = "ForeignContainer"

// Causes of a refused container, the cause label of OwnerRefusals.
const (
	// CausePodUID: the container belongs to another pod.
	CausePodUID = "pod-uid"
	// CauseContainerName: the container is another container of the same pod.
	CauseContainerName = "container-name"
	// CauseUnlabelled: the runtime does not say whose the container is (not created by a kubelet).
	CauseUnlabelled = "unlabelled"
	// CauseContainerID: the ID is not a whole container ID; the runtime resolves it, as a prefix,
	// to a container of another ID, which a later call may resolve to yet another container.
	CauseContainerID = "container-id"
	// CauseMirror: the container is the static pod's that the pod's kubernetes.io/config.mirror
	// annotation names, but its labels name another pod: the pod is not that static pod's mirror.
	CauseMirror = "mirror"
)

// Operations guarded by an owner check, the operation label of OwnerRefusals.
const (
	OpExecProbe = "exec-probe"
	OpStop      = "stop"
)

// OwnerRefusals counts the execs and stops not run because the container was not the pod's.
var OwnerRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "enhanced_liveness_daemon_foreign_container_refusals_total",
	Help: "Exec probes and container stops not run because the container the pod's status names is not that pod's, by operation and cause.",
}, []string{"operation", "cause"})

func init() { ctrlmetrics.Registry.MustRegister(OwnerRefusals) }

// StatusReader reads a container's status from the runtime.
type StatusReader interface {
	ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error)
}

// ExecRuntime is what exec probes need: to ask whose a container is, then to exec in it.
type ExecRuntime interface {
	Execer
	StatusReader
}

// Owner is the pod (by UID) and container a container must belong to. MirrorOf is the
// kubernetes.io/config.mirror annotation of a mirror pod: its static pod's UID, which is what the
// kubelet labels the containers of a static pod with (the mirror pod's own UID is the API
// server's). Namespace and Name are the pod's: the kubelet labels a static pod's containers with
// its mirror pod's namespace and name, the only proof of a mirror that its creator cannot write.
type Owner struct {
	PodUID, MirrorOf, Container string
	Namespace, Name             string
}

// PodOwner is container of pod as an Owner.
func PodOwner(pod *corev1.Pod, container string) Owner {
	return Owner{PodUID: string(pod.UID), MirrorOf: pod.Annotations[corev1.MirrorPodAnnotationKey], Container: container,
		Namespace: pod.Namespace, Name: pod.Name}
}

// NotOwnedError says that a container is not the one the pod's status should name.
type NotOwnedError struct {
	ContainerID string
	Want        Owner
	// Cause is one of the Cause constants.
	Cause string
	// PodUID and Container are what the runtime's labels say.
	PodUID, Container string
}

func (e *NotOwnedError) Error() string {
	switch e.Cause {
	case CauseUnlabelled:
		return fmt.Sprintf("container %s has no %s and %s labels: the runtime does not say it is container %q of pod %s",
			e.ContainerID, LabelPodUID, LabelContainerName, e.Want.Container, e.Want.PodUID)
	case CauseContainerName:
		return fmt.Sprintf("container %s is container %q of the pod, not %q", e.ContainerID, e.Container, e.Want.Container)
	case CauseContainerID:
		// Nor the container it resolves to: it may be another pod's.
		return fmt.Sprintf("container %s is not a whole container ID: the runtime answers with a container of another ID, "+
			"and nothing is run by part of an ID", e.ContainerID)
	case CauseMirror:
		return fmt.Sprintf("container %s belongs to the static pod that the pod's %s annotation names, but is not labelled "+
			"with the pod's namespace and name: pod %s is not that static pod's mirror", e.ContainerID, corev1.MirrorPodAnnotationKey, e.Want.PodUID)
	default:
		// The other pod is not named: the message goes to this pod's namespace.
		return fmt.Sprintf("container %s belongs to another pod, not to pod %s", e.ContainerID, e.Want.PodUID)
	}
}

// AsNotOwned returns the *NotOwnedError in err's chain, or nil.
func AsNotOwned(err error) *NotOwnedError {
	if err == nil {
		return nil // the common case, without a call
	}
	if no, ok := errors.AsType[*NotOwnedError](err); ok {
		return no
	}
	return nil
}

// CheckOwner returns a *NotOwnedError unless the runtime's status of a container labels it as
// container want.Container of pod want.PodUID (or, for a mirror pod, of its static pod, labelled
// with the mirror pod's namespace and name).
func CheckOwner(st *runtimeapi.ContainerStatus, want Owner) error {
	labels := st.GetLabels()
	uid, name := labels[LabelPodUID], labels[LabelContainerName]
	e := &NotOwnedError{ContainerID: st.GetId(), Want: want, PodUID: uid, Container: name}
	switch {
	case uid == "" || name == "":
		e.Cause = CauseUnlabelled
	case uid != want.PodUID && (want.MirrorOf == "" || uid != want.MirrorOf):
		e.Cause = CausePodUID
	case uid != want.PodUID && (labels[LabelPodNamespace] != want.Namespace || labels[LabelPodName] != want.Name):
		// Only the annotation, which whoever creates the pod writes, says it is a mirror: the
		// kubelet's labels must say so too.
		e.Cause = CauseMirror
	case name != want.Container:
		e.Cause = CauseContainerName
	default:
		return nil
	}
	return e
}

// CheckContainer is CheckOwner of the status the runtime gave for id (a container ID without
// its "<runtime>://" prefix), which must be the status of container id itself: runtimes resolve
// a unique prefix of an ID to the whole ID, and the container a prefix resolves to changes as
// containers come and go.
func CheckContainer(id string, st *runtimeapi.ContainerStatus, want Owner) error {
	if st.GetId() != id {
		return &NotOwnedError{ContainerID: id, Want: want, Cause: CauseContainerID}
	}
	return CheckOwner(st, want)
}

// VerifyOwner asks the runtime whose containerID (a pod-status ID with or without its
// "<runtime>://" prefix) is. It returns the container's ID as the runtime confirmed it, the one
// to exec in; a *NotOwnedError when it is not want's; the runtime's error when it cannot say.
func VerifyOwner(ctx context.Context, rt StatusReader, containerID string, want Owner) (string, error) {
	id := TrimContainerID(containerID)
	resp, err := rt.ContainerStatus(ctx, id, false)
	if err != nil {
		return "", err
	}
	if err := CheckContainer(id, resp.GetStatus(), want); err != nil {
		return "", err
	}
	return resp.GetStatus().GetId(), nil
}
