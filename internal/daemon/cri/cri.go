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

// Package cri connects the node daemon to the container runtime through the kubelet's own CRI
// client library, and exposes only the calls the daemon makes.
package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"
	utilexec "k8s.io/utils/exec"
)

// Runtime is the part of the CRI RuntimeService the daemon uses.
type Runtime interface {
	Version(ctx context.Context, apiVersion string) (*runtimeapi.VersionResponse, error)
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error)
	StopContainer(ctx context.Context, containerID string, timeout int64) error
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout []byte, stderr []byte, err error)
	SandboxReader
}

var _ Runtime = internalapi.RuntimeService(nil)

// ErrCommandTimedOut is returned (wrapped) by ExecSync when the command ran past its timeout.
var ErrCommandTimedOut = remote.ErrCommandTimedOut

// DefaultEndpoints are probed in order when no endpoint is configured: containerd, then CRI-O.
var DefaultEndpoints = []string{
	"unix:///run/containerd/containerd.sock",
	"unix:///var/run/containerd/containerd.sock",
	"unix:///run/crio/crio.sock",
	"unix:///var/run/crio/crio.sock",
}

// DetectEndpoint returns the first of candidates whose unix socket exists.
func DetectEndpoint(candidates []string) (string, error) {
	for _, c := range candidates {
		path := strings.TrimPrefix(c, "unix://")
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return c, nil
		}
	}
	return "", fmt.Errorf("no CRI socket found among %s; set --cri-endpoint", strings.Join(candidates, ", "))
}

// Connect dials the runtime at endpoint and checks that it serves the CRI v1 API.
// timeout bounds the connection and each unary call.
func Connect(ctx context.Context, endpoint string, timeout time.Duration) (Runtime, error) {
	if endpoint == "" {
		return nil, errors.New("cri: empty endpoint")
	}
	rs, err := remote.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(endpoint).
		WithConnectionTimeout(timeout).
		WithTracerProvider(noop.NewTracerProvider()).
		Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("cri: connect %s: %w", endpoint, err)
	}
	v, err := rs.Version(ctx, "v1")
	if err != nil {
		return nil, fmt.Errorf("cri: version of %s: %w", endpoint, err)
	}
	if v.RuntimeApiVersion != "v1" {
		return nil, fmt.Errorf("cri: %s serves CRI %s, need v1", endpoint, v.RuntimeApiVersion)
	}
	return rs, nil
}

// TrimContainerID strips the "<runtime>://" prefix that pod status puts before a CRI container ID.
func TrimContainerID(id string) string {
	if _, after, ok := strings.Cut(id, "://"); ok {
		return after
	}
	return id
}

// Execer is the CRI call that exec probes and exec lifecycle hooks make.
type Execer interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout, stderr []byte, err error)
}

// ExecResult is one ExecSync call read the way the kubelet reads it.
type ExecResult struct {
	// Output is stdout followed by stderr, cut to the limit the caller gave.
	Output []byte
	// ExitCode is the command's exit code; it is meaningful only when Err is nil.
	ExitCode int
	// Err says the command did not run to its end: it timed out (TimedOut), or the runtime could
	// not run it (container gone, runtime unavailable).
	Err error
}

// TimedOut reports whether the command ran past its timeout.
func (r ExecResult) TimedOut() bool { return errors.Is(r.Err, ErrCommandTimedOut) }

// Exec runs cmd in the container (a pod-status ID with or without its "<runtime>://" prefix)
// with timeout, keeping at most limit bytes of output. A non-zero exit is a result, not an error.
func Exec(ctx context.Context, rt Execer, containerID string, cmd []string, timeout time.Duration, limit int) ExecResult {
	stdout, stderr, err := rt.ExecSync(ctx, TrimContainerID(containerID), cmd, timeout)
	out := append(slices.Clip(stdout), stderr...)
	if len(out) > limit {
		out = out[:limit]
	}
	r := ExecResult{Output: out}
	var exit utilexec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.ExitCode = exit.ExitStatus()
	default:
		r.Err = err
	}
	return r
}
