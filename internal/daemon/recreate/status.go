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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// maxMessage is the API's limit on status messages.
const maxMessage = 1024

// conflictRetries bounds how often a step is made again after a write conflict.
const conflictRetries = 5

// errConflict means the request changed since it was read; plan again from a fresh read.
var errConflict = errors.New("request changed since it was read")

// errSuperseded means the request finished or stopped being active while the daemon worked on it
// (the manager failed it, or removed its active label): nothing more to write.
var errSuperseded = errors.New("request finished or inactive")

func ignoreSuperseded(err error) error {
	if errors.Is(err, errSuperseded) {
		return nil
	}
	return err
}

// writeStatus applies mutate to the request's status and writes it as a merge patch that carries
// the resourceVersion it was computed from, so neither a concurrent write by the manager nor a
// newer write of the executor's own (which a lagging cache has not shown yet) is overwritten. A
// conflict returns errConflict, and the caller plans again from a fresh read. fence writes even
// when nothing changed: it proves the status the plan came from is current before a stop.
func (e *Executor) writeStatus(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, fence bool,
	mutate func(*appsv1alpha1.ContainerRecreateRequestStatus)) (*appsv1alpha1.ContainerRecreateRequest, error) {
	cur := crr.DeepCopy()
	base := crr.DeepCopy()
	mutate(&cur.Status)
	truncateMessages(&cur.Status)
	if !fence && equality.Semantic.DeepEqual(base.Status, cur.Status) {
		return cur, nil
	}
	err := e.Client.Status().Patch(ctx, cur, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	switch {
	case err == nil:
		return cur, nil
	case apierrors.IsConflict(err):
		return nil, errConflict
	case apierrors.IsNotFound(err):
		return nil, errSuperseded
	default:
		return nil, fmt.Errorf("writing status of ContainerRecreateRequest %s/%s: %w", crr.Namespace, crr.Name, err)
	}
}

// writeStates records per-container states and the request's phase.
func (e *Executor) writeStates(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, fence bool,
	states []appsv1alpha1.ContainerRecreateState, phase appsv1alpha1.ContainerRecreateRequestPhase, msg string) (*appsv1alpha1.ContainerRecreateRequest, error) {
	return e.writeStatus(ctx, crr, fence, func(s *appsv1alpha1.ContainerRecreateRequestStatus) {
		s.Phase, s.Message = phase, msg
		s.ContainerRecreateStates = append([]appsv1alpha1.ContainerRecreateState(nil), states...)
	})
}

// finish writes the final phase with its completion time, counts it and emits an event on the request.
func (e *Executor) finish(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest,
	states []appsv1alpha1.ContainerRecreateState, phase appsv1alpha1.ContainerRecreateRequestPhase, msg string) error {
	now := metav1.NewTime(e.Clock.Now())
	done, err := e.writeStatus(ctx, crr, false, func(s *appsv1alpha1.ContainerRecreateRequestStatus) {
		s.Phase, s.Message, s.CompletionTime = phase, msg, &now
		if states != nil {
			s.ContainerRecreateStates = append([]appsv1alpha1.ContainerRecreateState(nil), states...)
		}
	})
	if err != nil {
		return err
	}
	e.forget(client.ObjectKeyFromObject(crr))
	result, eventType, reason := "succeeded", corev1.EventTypeNormal, ReasonSucceeded
	if phase == appsv1alpha1.RecreateFailed {
		result, eventType, reason = "failed", corev1.EventTypeWarning, ReasonFailed
	}
	crrExecuted.WithLabelValues(result).Inc()
	e.Recorder.Eventf(done, nil, eventType, reason, "Recreate", "%s", done.Status.Message)
	logf.FromContext(ctx).Info("request finished", "phase", phase, "message", done.Status.Message)
	return nil
}

func truncateMessages(s *appsv1alpha1.ContainerRecreateRequestStatus) {
	s.Message = truncate.String(s.Message, maxMessage)
	for i := range s.ContainerRecreateStates {
		s.ContainerRecreateStates[i].Message = truncate.String(s.ContainerRecreateStates[i].Message, maxMessage)
	}
}
