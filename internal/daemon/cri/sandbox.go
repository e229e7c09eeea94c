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
	"sync"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// SandboxReader reads pod sandboxes from the runtime.
type SandboxReader interface {
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
	PodSandboxStatus(ctx context.Context, podSandboxID string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error)
}

// PodAddress is where the probes and hooks of a pod that name no host connect to.
type PodAddress struct {
	IP        string
	SandboxID string
	// HostNetwork: the sandbox shares the node's network; IP is the node's.
	HostNetwork bool
}

// Addresses finds a pod's address with the runtime rather than in the pod's status.podIP, which
// whoever can write pods/status can point at another pod. A sandbox's address never changes, so
// it is asked once per sandbox: a pod's entry is replaced when its ready sandbox is another.
type Addresses struct {
	Runtime SandboxReader
	// NodeIP returns the node's address, which a host-network pod listens on (the runtime reports
	// no address for such a sandbox). Nil: host-network pods have no address.
	NodeIP func(ctx context.Context) (string, error)

	mu   sync.Mutex
	pods map[string]PodAddress // by the pod UID the runtime labels the sandbox with
}

// Of returns the address of the pod's ready sandbox. It asks the runtime for the sandbox every
// time (one list call) and for its address only when the sandbox is new: call it when a new
// container of the pod appears, not on every probe.
func (a *Addresses) Of(ctx context.Context, pod *corev1.Pod) (PodAddress, error) {
	if a == nil || a.Runtime == nil {
		return PodAddress{}, errors.New("no container runtime to ask the pod's address")
	}
	uid := runtimeUID(pod)
	sb, err := a.readySandbox(ctx, uid)
	if err != nil {
		return PodAddress{}, err
	}
	a.mu.Lock()
	cached, ok := a.pods[uid]
	a.mu.Unlock()
	if ok && cached.SandboxID == sb {
		return cached, nil
	}
	addr, err := a.status(ctx, sb)
	if err != nil {
		return PodAddress{}, err
	}
	a.mu.Lock()
	if a.pods == nil {
		a.pods = map[string]PodAddress{}
	}
	a.pods[uid] = addr
	a.mu.Unlock()
	return addr, nil
}

// Forget drops what is known of the pod (it left the node).
func (a *Addresses) Forget(pod *corev1.Pod) {
	if a == nil {
		return
	}
	a.mu.Lock()
	delete(a.pods, runtimeUID(pod))
	a.mu.Unlock()
}

// runtimeUID is the UID the kubelet labels the pod's sandboxes and containers with: a static
// pod's own, which its mirror pod carries in an annotation.
func runtimeUID(pod *corev1.Pod) string {
	if m := pod.Annotations[corev1.MirrorPodAnnotationKey]; m != "" {
		return m
	}
	return string(pod.UID)
}

// readySandbox returns the ID of the pod's ready sandbox, the newest if the runtime lists more.
func (a *Addresses) readySandbox(ctx context.Context, uid string) (string, error) {
	list, err := a.Runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
		LabelSelector: map[string]string{LabelPodUID: uid},
	})
	if err != nil {
		return "", &SandboxError{Op: "ListPodSandbox", Err: err}
	}
	var newest *runtimeapi.PodSandbox
	for _, s := range list {
		// The filter is the runtime's to apply; a sandbox of another pod is never taken.
		if s.GetLabels()[LabelPodUID] != uid || s.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		if newest == nil || s.GetCreatedAt() > newest.GetCreatedAt() {
			newest = s
		}
	}
	if newest == nil {
		return "", fmt.Errorf("the runtime has no ready sandbox of pod UID %s", uid)
	}
	return newest.GetId(), nil
}

// status reads the sandbox's address: its own, or the node's when it shares the node's network.
func (a *Addresses) status(ctx context.Context, id string) (PodAddress, error) {
	resp, err := a.Runtime.PodSandboxStatus(ctx, id, false)
	if err != nil {
		return PodAddress{}, &SandboxError{Op: "PodSandboxStatus", Err: err}
	}
	st := resp.GetStatus()
	if st.GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE {
		if a.NodeIP == nil {
			return PodAddress{}, fmt.Errorf("sandbox %s shares the node's network and the node's IP is not known", id)
		}
		ip, err := a.NodeIP(ctx)
		if err != nil {
			return PodAddress{}, fmt.Errorf("sandbox %s shares the node's network: the node's IP: %w", id, err)
		}
		return PodAddress{IP: ip, SandboxID: id, HostNetwork: true}, nil
	}
	ip := st.GetNetwork().GetIp()
	if ip == "" {
		return PodAddress{}, fmt.Errorf("the runtime reports no IP for sandbox %s", id)
	}
	return PodAddress{IP: ip, SandboxID: id}, nil
}

// SandboxError is a failed CRI call of Addresses (the runtime's error, not the pod's state).
type SandboxError struct {
	Op  string
	Err error
}

func (e *SandboxError) Error() string { return fmt.Sprintf("CRI %s: %v", e.Op, e.Err) }
func (e *SandboxError) Unwrap() error { return e.Err }

// HostIP is the address a host-network pod of node listens on, the one the kubelet reports as
// its pods' status.hostIP: the node's first InternalIP, else its first ExternalIP.
func HostIP(node *corev1.Node) (string, error) {
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP} {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return a.Address, nil
			}
		}
	}
	return "", fmt.Errorf("node %s has no InternalIP or ExternalIP in status.addresses", node.Name)
}
