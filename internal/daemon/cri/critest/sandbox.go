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

package critest

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

func newSandbox(id, podUID, ip string) *runtimeapi.PodSandboxStatus {
	return &runtimeapi.PodSandboxStatus{
		Id:        id,
		Metadata:  &runtimeapi.PodSandboxMetadata{Name: "pod-" + podUID, Namespace: "critest", Uid: podUID},
		State:     runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: time.Now().UnixNano(),
		Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: ip},
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
			Options: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD}}},
		Labels: map[string]string{cri.LabelPodUID: podUID},
	}
}

// AddSandbox makes id the ready sandbox of the pod whose UID is podUID, with address ip, as the
// kubelet does when it (re)creates a pod's sandbox: the pod's other sandboxes are no longer ready.
// hostNetwork makes it share the node's network (the runtime then reports no address).
func (s *Server) AddSandbox(id, podUID, ip string, hostNetwork bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	for _, p := range s.pods {
		if p.Labels[cri.LabelPodUID] == podUID {
			p.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		}
	}
	sb := newSandbox(id, podUID, ip)
	if hostNetwork {
		sb.Network.Ip = ""
		sb.Linux.Namespaces.Options.Network = runtimeapi.NamespaceMode_NODE
	}
	s.pods[id] = sb
}

// ListPodSandbox lists the sandboxes matching the filter's ID, state and labels.
func (s *Server) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	s.record(Call{Method: "ListPodSandbox"})
	s.mu.Lock()
	defer s.mu.Unlock()
	f := req.GetFilter()
	var out []*runtimeapi.PodSandbox
	for id, p := range s.pods {
		if f.GetId() != "" && f.GetId() != id || f.GetState() != nil && f.GetState().State != p.State || !hasLabels(p.Labels, f.GetLabelSelector()) {
			continue
		}
		out = append(out, &runtimeapi.PodSandbox{Id: id, Metadata: p.Metadata, State: p.State, CreatedAt: p.CreatedAt, Labels: p.Labels})
	}
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

func hasLabels(labels, selector map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// PodSandboxStatus returns the sandbox's status.
func (s *Server) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	s.record(Call{Method: "PodSandboxStatus", ContainerID: req.PodSandboxId})
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[req.PodSandboxId]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "sandbox %q not found", req.PodSandboxId)
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: proto.Clone(p).(*runtimeapi.PodSandboxStatus)}, nil
}
