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
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestRestartAndRemove(t *testing.T) {
	s := &Server{}
	old := s.AddContainer("sb", "app")
	id, err := s.Restart(old)
	if err != nil || id == old {
		t.Fatalf("Restart = %q, %v", id, err)
	}
	if st, _ := s.State(old); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("old state %v, want exited", st)
	}
	if st, _ := s.State(id); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("new state %v, want running", st)
	}
	s.mu.Lock()
	name, attempt, sb := s.containers[id].Metadata.Name, s.containers[id].Metadata.Attempt, s.sandboxes[id]
	s.mu.Unlock()
	if name != "app" || attempt != 1 || sb != "sb" {
		t.Errorf("new container: name %q attempt %d sandbox %q", name, attempt, sb)
	}
	if _, err := s.Restart("missing"); err == nil {
		t.Error("Restart of an unknown container must fail")
	}
	s.Remove(old)
	if _, ok := s.State(old); ok {
		t.Error("removed container still known")
	}
}
