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

package recreate

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/patch"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// conflictRetries bounds how often a step is observed and planned again after its status write
// conflicted.
const conflictRetries = 5

// write writes the plan's status, under optimistic lock (internal/patch). After a conflict the
// request is observed and planned again from a fresh read; write returns the observation and
// plan whose status it wrote (or that left the request alone).
func (e *Executor) write(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, o Observation, p Plan) (Observation, Plan, error) {
	h := patch.NewHelper(crr, e.Client, e.APIReader, patch.Attempts(1+conflictRetries))
	_, err := h.Patch(ctx, crr, e.record(crr, p), func(fresh *appsv1alpha1.ContainerRecreateRequest) (bool, error) {
		var err error
		if o, err = e.observe(ctx, fresh); err != nil {
			return false, err
		}
		p = Advance(o)
		return e.record(fresh, p), nil
	})
	return o, p, err
}

// record sets the request's status to the plan's, and reports whether to write it: when it
// changed, or when the plan's stops wait for the write (Plan.Fence). A plan that leaves the
// request alone records nothing. A finished request gets its completion time.
func (e *Executor) record(crr *appsv1alpha1.ContainerRecreateRequest, p Plan) bool {
	if p.Leave != "" {
		return false
	}
	before := crr.Status.DeepCopy()
	s := &crr.Status
	s.Phase, s.Message = p.Phase, p.Message
	s.ContainerRecreateStates = slices.Clone(p.States)
	if p.Phase.Finished() {
		s.CompletionTime = &metav1.Time{Time: e.Clock.Now()}
	}
	truncateMessages(s)
	return p.Fence() || !equality.Semantic.DeepEqual(before, s)
}

// truncateMessages cuts every message to the API's limit.
func truncateMessages(s *appsv1alpha1.ContainerRecreateRequestStatus) {
	s.Message = truncate.String(s.Message, appsv1alpha1.MaxMessageLength)
	for i := range s.ContainerRecreateStates {
		s.ContainerRecreateStates[i].Message = truncate.String(s.ContainerRecreateStates[i].Message, appsv1alpha1.MaxMessageLength)
	}
}
