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

package protection

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// NodeState is what the node-storm rule needs of one node.
type NodeState struct {
	Name string
	// Pods is the number of enrolled pods on the node.
	Pods int32
	// FailingPods is the number of those with a Failed liveness state, or one that has started
	// failing (suspect).
	FailingPods int32
	// FailingWorkloads is the number of distinct workloads with such a pod on the node.
	FailingWorkloads int32
}

// NodeStormRule is the failure-storm breaker applied across one node: when many unrelated
// workloads fail on one node at once, the node or its daemon is the likely cause, not the apps.
type NodeStormRule struct {
	// MaxFailing of the node's enrolled pods (int or percent, rounded up). 100% disables the rule.
	MaxFailing intstr.IntOrString
	// MinWorkloads is how many distinct workloads must be failing on the node before it can be a
	// node storm, so that one workload's own storm is not blamed on the node.
	MinWorkloads int32
}

// Validate checks the manager flags.
func (r NodeStormRule) Validate() error {
	if err := ValidateIntOrPercent(r.MaxFailing); err != nil {
		return fmt.Errorf("--node-storm-max-failing: %w", err)
	}
	if r.MinWorkloads < 1 {
		return fmt.Errorf("--node-storm-min-workloads: must be at least 1, got %d", r.MinWorkloads)
	}
	return nil
}

// Storm reports whether the node is in a storm: at least MinWorkloads workloads failing there and
// failing pods above MaxFailing of the node's pods.
func (r NodeStormRule) Storm(n NodeState) bool {
	return n.FailingWorkloads >= r.MinWorkloads && n.FailingPods > Scaled(r.MaxFailing, n.Pods)
}
