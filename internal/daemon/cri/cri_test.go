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

package cri_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

func startServer(t *testing.T, s *critest.Server) cri.Runtime {
	t.Helper()
	// unix socket paths are limited to ~108 bytes; t.TempDir() can be longer.
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ep, err := s.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	rt, err := cri.Connect(context.Background(), ep, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestConnectAndCalls(t *testing.T) {
	s := &critest.Server{ExecFunc: func(req *runtimeapi.ExecSyncRequest) critest.ExecResult {
		if req.Cmd[0] == "fail" {
			return critest.ExecResult{Stdout: "out", Stderr: "err", ExitCode: 3}
		}
		if req.Cmd[0] == "slow" {
			return critest.ExecResult{Delay: 3 * time.Second}
		}
		return critest.ExecResult{Stdout: "ok"}
	}}
	rt := startServer(t, s)
	ctx := context.Background()
	id := s.AddContainer("sb1", "app")

	out, _, err := rt.ExecSync(ctx, id, []string{"true"}, time.Second)
	if err != nil || string(out) != "ok" {
		t.Fatalf("ExecSync ok: out=%q err=%v", out, err)
	}
	out, errOut, err := rt.ExecSync(ctx, id, []string{"fail"}, time.Second)
	if err == nil || string(out) != "out" || string(errOut) != "err" || !strings.Contains(err.Error(), "exited with 3") {
		t.Fatalf("ExecSync fail: out=%q stderr=%q err=%v", out, errOut, err)
	}
	_, _, err = rt.ExecSync(ctx, id, []string{"slow"}, time.Second)
	if !errors.Is(err, cri.ErrCommandTimedOut) {
		t.Fatalf("ExecSync slow: want ErrCommandTimedOut, got %v", err)
	}

	if err := rt.StopContainer(ctx, id, 7); err != nil {
		t.Fatal(err)
	}
	st, err := rt.ContainerStatus(ctx, id, false)
	if err != nil || st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Fatalf("status after stop: %v %v", st, err)
	}
	if c := s.Calls("StopContainer"); len(c) != 1 || c[0].Timeout != 7 {
		t.Fatalf("stop calls: %+v", c)
	}
	list, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: "sb1"})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
}

func TestDetectEndpoint(t *testing.T) {
	s := &critest.Server{}
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	ep, err := s.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	missing := "unix://" + filepath.Join(dir, "missing.sock")
	got, err := cri.DetectEndpoint([]string{missing, ep})
	if err != nil || got != ep {
		t.Fatalf("DetectEndpoint = %q, %v; want %q", got, err, ep)
	}
	if _, err := cri.DetectEndpoint([]string{missing}); err == nil || !strings.Contains(err.Error(), "--cri-endpoint") {
		t.Fatalf("want error naming the flag, got %v", err)
	}
	if got := cri.TrimContainerID("containerd://abc"); got != "abc" {
		t.Fatalf("TrimContainerID = %q", got)
	}
}
