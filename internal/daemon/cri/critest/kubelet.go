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
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Restart does what the kubelet does after a container stopped: the old instance stays exited
// (it is marked so if it still ran) and a new running instance of the same name is created in the
// same sandbox. It returns the new ID.
func (s *Server) Restart(oldID string) (string, error) {
	s.mu.Lock()
	old, ok := s.containers[oldID]
	if !ok {
		s.mu.Unlock()
		return "", fmt.Errorf("critest: no container %q", oldID)
	}
	if old.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		old.State = runtimeapi.ContainerState_CONTAINER_EXITED
		old.FinishedAt = time.Now().UnixNano()
		old.ExitCode = 137
	}
	sandbox, name := s.sandboxes[oldID], old.GetMetadata().GetName()
	attempt := old.GetMetadata().GetAttempt() + 1
	s.mu.Unlock()

	id := s.AddContainer(sandbox, name)
	s.mu.Lock()
	s.containers[id].Metadata.Attempt = attempt
	s.mu.Unlock()
	return id, nil
}

// Remove forgets a container, as the runtime does after garbage collection.
func (s *Server) Remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.containers, id)
	delete(s.sandboxes, id)
}
