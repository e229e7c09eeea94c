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

// Package critest runs a scriptable CRI RuntimeService on a unix socket, for tests of the node
// daemon's exec probes and container restarts without a container runtime.
package critest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

// ExecResult is a scripted outcome of ExecSync. A Delay longer than the request's timeout makes
// the call fail with DeadlineExceeded after the timeout, as containerd does.
type ExecResult struct {
	Stdout, Stderr string
	ExitCode       int32
	Delay          time.Duration
	Err            error // returned as is (a runtime error, not a command failure)
}

// Call records one RPC the server received.
type Call struct {
	Method string
	// ContainerID is the container's ID as asked, or the sandbox's for a sandbox call.
	ContainerID string
	Cmd         []string
	Timeout     int64
	At          time.Time
	// Resolved is the whole ID of the container ContainerID named (ExecSync, StopContainer and
	// ContainerStatus resolve a unique prefix, as containerd and CRI-O do); empty if none.
	Resolved string
}

// Server is a fake RuntimeService. Its fields are safe to set before Start; use the methods after.
type Server struct {
	runtimeapi.UnimplementedRuntimeServiceServer

	// ExecFunc decides the outcome of ExecSync; nil means exit 0 with no output.
	ExecFunc func(req *runtimeapi.ExecSyncRequest) ExecResult
	// StopFunc is called by StopContainer before the container is marked exited; an error fails the call.
	StopFunc func(containerID string, timeout int64) error

	// PodIP is the address of the sandboxes AddContainer creates.
	PodIP string

	mu         sync.Mutex
	containers map[string]*runtimeapi.ContainerStatus
	sandboxes  map[string]string // container ID -> sandbox ID
	pods       map[string]*runtimeapi.PodSandboxStatus
	calls      []Call
	nextID     int

	grpc     *grpc.Server
	endpoint string
}

// Start serves on a socket in dir and returns the endpoint ("unix://...").
func (s *Server) Start(dir string) (string, error) {
	path := filepath.Join(dir, "cri.sock")
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.initLocked()
	s.grpc = grpc.NewServer()
	s.endpoint = "unix://" + path
	s.mu.Unlock()
	runtimeapi.RegisterRuntimeServiceServer(s.grpc, s)
	go func() { _ = s.grpc.Serve(l) }()
	return s.endpoint, nil
}

// Close stops the server.
func (s *Server) Close() {
	if s.grpc != nil {
		s.grpc.Stop()
	}
}

func (s *Server) initLocked() {
	if s.containers == nil {
		s.containers = map[string]*runtimeapi.ContainerStatus{}
		s.sandboxes = map[string]string{}
		s.pods = map[string]*runtimeapi.PodSandboxStatus{}
	}
}

// AddContainer registers a running container named name of the pod whose UID is podUID, labelled
// as the kubelet labels it, and returns its ID (without the "containerd://" prefix). The pod's
// sandbox ID is its UID; the sandbox is created, ready with address PodIP, if it is new.
func (s *Server) AddContainer(podUID, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := fmt.Sprintf("%s-%s-%04d", podUID, name, s.nextID)
	s.addLocked(id, podUID, name)
	return id
}

// AddContainerWithID is AddContainer of a container whose ID is id, e.g. one that begins as
// another's does.
func (s *Server) AddContainerWithID(id, podUID, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(id, podUID, name)
}

func (s *Server) addLocked(id, podUID, name string) {
	s.initLocked()
	if _, ok := s.pods[podUID]; !ok {
		s.pods[podUID] = newSandbox(podUID, podUID, s.PodIP)
	}
	s.containers[id] = &runtimeapi.ContainerStatus{
		Id:        id,
		Metadata:  &runtimeapi.ContainerMetadata{Name: name},
		Labels:    map[string]string{cri.LabelPodUID: podUID, cri.LabelContainerName: name},
		Image:     &runtimeapi.ImageSpec{Image: "critest/" + name},
		ImageRef:  "critest/" + name + "@sha256:0",
		State:     runtimeapi.ContainerState_CONTAINER_RUNNING,
		CreatedAt: time.Now().UnixNano(),
		StartedAt: time.Now().UnixNano(),
	}
	s.sandboxes[id] = podUID
}

// resolveLocked returns the whole ID of the container id names, as containerd and CRI-O resolve
// it: the container of exactly that ID, else the only one whose ID begins with id. A prefix of
// more than one container's ID is an error; a prefix of none, or an empty ID, is NotFound.
func (s *Server) resolveLocked(id string) (string, error) {
	if _, ok := s.containers[id]; ok {
		return id, nil
	}
	if id == "" {
		return "", status.Errorf(codes.NotFound, "no container ID")
	}
	found := ""
	for full := range s.containers {
		if !strings.HasPrefix(full, id) {
			continue
		}
		if found != "" {
			return "", status.Errorf(codes.Unknown, "multiple container IDs begin with %q", id)
		}
		found = full
	}
	if found == "" {
		return "", status.Errorf(codes.NotFound, "container %q not found", id)
	}
	return found, nil
}

// SetOwner relabels a container as container name of the pod whose UID is podUID (for pods whose
// UID the API server gives only once they are created).
func (s *Server) SetOwner(id, podUID, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.containers[id]; ok {
		c.Labels = map[string]string{cri.LabelPodUID: podUID, cri.LabelContainerName: name}
		s.sandboxes[id] = podUID
		if _, ok := s.pods[podUID]; !ok {
			s.pods[podUID] = newSandbox(podUID, podUID, s.PodIP)
		}
	}
}

// State returns the state of a container, and false if it is unknown.
func (s *Server) State(id string) (runtimeapi.ContainerState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[id]
	if !ok {
		return 0, false
	}
	return c.State, true
}

// Calls returns the RPCs received so far, optionally only those of one method.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (s *Server) record(c Call) {
	c.At = time.Now()
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

// Version implements the CRI v1 handshake.
func (s *Server) Version(_ context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "critest", RuntimeVersion: "0.1.0", RuntimeApiVersion: "v1"}, nil
}

// ExecSync runs the scripted ExecFunc in the container the request's ID resolves to.
func (s *Server) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	s.mu.Lock()
	id, err := s.resolveLocked(req.ContainerId)
	running := err == nil && s.containers[id].State == runtimeapi.ContainerState_CONTAINER_RUNNING
	s.mu.Unlock()
	s.record(Call{Method: "ExecSync", ContainerID: req.ContainerId, Resolved: id, Cmd: req.Cmd, Timeout: req.Timeout})
	if err != nil {
		return nil, err
	}
	if !running {
		return nil, status.Errorf(codes.NotFound, "container %q is not running", req.ContainerId)
	}
	r := ExecResult{}
	if s.ExecFunc != nil {
		r = s.ExecFunc(req)
	}
	if r.Delay > 0 {
		limit := r.Delay
		timedOut := req.Timeout > 0 && time.Duration(req.Timeout)*time.Second < r.Delay
		if timedOut {
			limit = time.Duration(req.Timeout) * time.Second
		}
		select {
		case <-time.After(limit):
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		if timedOut {
			return nil, status.Errorf(codes.DeadlineExceeded, "command %v timed out", req.Cmd)
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return &runtimeapi.ExecSyncResponse{Stdout: []byte(r.Stdout), Stderr: []byte(r.Stderr), ExitCode: r.ExitCode}, nil
}

// StopContainer marks the container the request's ID resolves to exited, after StopFunc allowed it.
func (s *Server) StopContainer(_ context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	s.mu.Lock()
	resolved, _ := s.resolveLocked(req.ContainerId)
	s.mu.Unlock()
	s.record(Call{Method: "StopContainer", ContainerID: req.ContainerId, Resolved: resolved, Timeout: req.Timeout})
	if s.StopFunc != nil {
		if err := s.StopFunc(req.ContainerId, req.Timeout); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := s.resolveLocked(req.ContainerId)
	if err != nil {
		return nil, err
	}
	c := s.containers[id]
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.FinishedAt = time.Now().UnixNano()
	c.ExitCode = 137
	return &runtimeapi.StopContainerResponse{}, nil
}

// ContainerStatus returns the status of the container the request's ID resolves to; its Id is
// the whole ID.
func (s *Server) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	s.mu.Lock()
	id, err := s.resolveLocked(req.ContainerId)
	var c *runtimeapi.ContainerStatus
	if err == nil {
		c = proto.Clone(s.containers[id]).(*runtimeapi.ContainerStatus)
	}
	s.mu.Unlock()
	s.record(Call{Method: "ContainerStatus", ContainerID: req.ContainerId, Resolved: id})
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatusResponse{Status: c}, nil
}

// ListContainers lists the containers matching the filter's ID, sandbox and state.
func (s *Server) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	s.record(Call{Method: "ListContainers"})
	s.mu.Lock()
	defer s.mu.Unlock()
	f := req.GetFilter()
	var out []*runtimeapi.Container
	for id, c := range s.containers {
		if f.GetId() != "" && f.GetId() != id {
			continue
		}
		if f.GetPodSandboxId() != "" && f.GetPodSandboxId() != s.sandboxes[id] {
			continue
		}
		if f.GetState() != nil && f.GetState().State != c.State {
			continue
		}
		out = append(out, &runtimeapi.Container{Id: id, PodSandboxId: s.sandboxes[id], Metadata: c.Metadata, Image: c.Image, ImageRef: c.ImageRef,
			State: c.State, CreatedAt: c.CreatedAt, Labels: c.Labels})
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}
