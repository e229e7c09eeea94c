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
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The server resolves container IDs as containerd and CRI-O do: an exact ID, else a prefix of
// exactly one container's ID; a prefix of several is an error, of none NotFound.
func TestServerResolvesIDPrefixes(t *testing.T) {
	ctx := context.Background()
	s := &Server{}
	s.AddContainerWithID("abc123", "uid-1", "app")
	s.AddContainerWithID("abc456", "uid-2", "app")
	s.AddContainerWithID("abc4567", "uid-3", "app")

	for _, tc := range []struct {
		asked, want string
		code        codes.Code
	}{
		{"abc123", "abc123", codes.OK},
		{"abc1", "abc123", codes.OK},
		{"abc456", "abc456", codes.OK}, // exact, though also a prefix of abc4567
		{"abc45", "", codes.Unknown},
		{"abc", "", codes.Unknown},
		{"abd", "", codes.NotFound},
		{"", "", codes.NotFound},
	} {
		resp, err := s.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: tc.asked})
		if status.Code(err) != tc.code || resp.GetStatus().GetId() != tc.want {
			t.Errorf("ContainerStatus(%q) = %q, %v; want %q, %v", tc.asked, resp.GetStatus().GetId(), err, tc.want, tc.code)
		}
		_, err = s.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: tc.asked, Cmd: []string{"true"}})
		if status.Code(err) != tc.code {
			t.Errorf("ExecSync(%q): %v, want %v", tc.asked, err, tc.code)
		}
	}
	if got := s.Calls("ExecSync")[1]; got.ContainerID != "abc1" || got.Resolved != "abc123" {
		t.Errorf("ExecSync call %+v, want abc1 resolved to abc123", got)
	}

	if _, err := s.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: "abc1"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.State("abc123"); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("abc123 is %v after a stop of abc1, want exited", st)
	}
	if _, err := s.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: "abc45"}); status.Code(err) != codes.Unknown {
		t.Errorf("StopContainer(abc45): %v, want an ambiguity error", err)
	}
}
