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

package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestContainerRecreateRequestLifecycle(t *testing.T) {
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name             string
		phase            ContainerRecreateRequestPhase
		deleting         bool
		deadline         *int64
		ttl              *int32
		finished, active bool
		wantDeadline     time.Time
		wantTTL          time.Duration
	}{
		{name: "new, defaults", finished: false, active: true, wantDeadline: created.Add(10 * time.Minute), wantTTL: 5 * time.Minute},
		{name: "pending", phase: RecreatePending, active: true, wantDeadline: created.Add(10 * time.Minute), wantTTL: 5 * time.Minute},
		{name: "recreating, own deadline", phase: RecreateRecreating, deadline: ptr.To[int64](45), active: true,
			wantDeadline: created.Add(45 * time.Second), wantTTL: 5 * time.Minute},
		{name: "succeeded, own TTL", phase: RecreateSucceeded, ttl: ptr.To[int32](0), finished: true,
			wantDeadline: created.Add(10 * time.Minute), wantTTL: 0},
		{name: "failed", phase: RecreateFailed, finished: true, wantDeadline: created.Add(10 * time.Minute), wantTTL: 5 * time.Minute},
		{name: "being deleted", phase: RecreateRecreating, deleting: true, wantDeadline: created.Add(10 * time.Minute), wantTTL: 5 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &ContainerRecreateRequest{
				ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
				Spec:       ContainerRecreateRequestSpec{ActiveDeadlineSeconds: tc.deadline, TTLSecondsAfterFinished: tc.ttl},
				Status:     ContainerRecreateRequestStatus{Phase: tc.phase},
			}
			if tc.deleting {
				r.DeletionTimestamp = ptr.To(metav1.NewTime(created))
			}
			if r.Finished() != tc.finished || r.Active() != tc.active {
				t.Errorf("Finished=%v Active=%v, want %v %v", r.Finished(), r.Active(), tc.finished, tc.active)
			}
			if !r.Deadline().Equal(tc.wantDeadline) || r.TTLAfterFinished() != tc.wantTTL {
				t.Errorf("Deadline=%v TTL=%v, want %v %v", r.Deadline(), r.TTLAfterFinished(), tc.wantDeadline, tc.wantTTL)
			}
		})
	}
}

func TestActiveDeadlineSecondsFor(t *testing.T) {
	for _, tc := range []struct {
		grace      int64
		minStarted int32
		want       int64
	}{
		{30, 0, 600},              // the default covers an ordinary grace period
		{420, 0, 600},             // 420 + 180 = 600
		{421, 0, 601},             // beyond it, the grace period sets the deadline
		{900, 0, 1080},            // a 15-minute preStop/grace
		{900, 60, 900 + 60 + 180}, // and the time the new container must run
		{0, 0, 600},
	} {
		if got := ActiveDeadlineSecondsFor(tc.grace, tc.minStarted); got != tc.want {
			t.Errorf("ActiveDeadlineSecondsFor(%d, %d) = %d, want %d", tc.grace, tc.minStarted, got, tc.want)
		}
	}
}
