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

	corev1 "k8s.io/api/core/v1"
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

func TestTerminationGracePeriodFor(t *testing.T) {
	podWith := func(s *int64) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: s}}
	}
	cases := []struct {
		name  string
		given *int64
		pod   *corev1.Pod
		want  int64
	}{
		{"given (the probe's or the request's) wins", ptr.To[int64](7), podWith(ptr.To[int64](60)), 7},
		{"pod's when none is given", nil, podWith(ptr.To[int64](60)), 60},
		{"30 when neither is set", nil, podWith(nil), 30},
		{"30 without a pod", nil, nil, 30},
		{"zero is kept (floored at stop time)", ptr.To[int64](0), podWith(ptr.To[int64](60)), 0},
	}
	for _, tc := range cases {
		if got := TerminationGracePeriodFor(tc.given, tc.pod); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
		r := &ContainerRecreateRequest{Spec: ContainerRecreateRequestSpec{Strategy: ContainerRecreateRequestStrategy{
			TerminationGracePeriodSeconds: tc.given}}}
		if got := r.GracePeriodSeconds(tc.pod); got != tc.want {
			t.Errorf("%s: GracePeriodSeconds = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestSetDefaults(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "uid-web"},
		Spec:       corev1.PodSpec{NodeName: "node-1", TerminationGracePeriodSeconds: ptr.To[int64](45)},
	}
	probes := map[string]*int64{"app": ptr.To[int64](7), "slow": ptr.To[int64](900)}
	probeGrace := func(c string) *int64 { return probes[c] }
	request := func(containers ...string) *ContainerRecreateRequest {
		r := &ContainerRecreateRequest{}
		for _, c := range containers {
			r.Spec.Containers = append(r.Spec.Containers, ContainerRecreateRequestContainer{Name: c})
		}
		return r
	}
	for _, tc := range []struct {
		name         string
		r            *ContainerRecreateRequest
		wantGrace    int64
		wantDeadline int64
		wantTTL      int32
		wantPolicy   ContainerRecreateRequestFailurePolicy
	}{
		{name: "the probe's grace period", r: request("app"), wantGrace: 7, wantDeadline: 600, wantTTL: 300, wantPolicy: FailurePolicyFail},
		{name: "the pod's when the probe sets none", r: request("other"), wantGrace: 45, wantDeadline: 600, wantTTL: 300, wantPolicy: FailurePolicyFail},
		{name: "the longest of the containers', and a deadline that covers it",
			r: request("app", "slow", "other"), wantGrace: 900, wantDeadline: 900 + RestartMarginSeconds, wantTTL: 300, wantPolicy: FailurePolicyFail},
		{name: "minStartedSeconds counts in the deadline", r: func() *ContainerRecreateRequest {
			r := request("slow")
			r.Spec.Strategy.MinStartedSeconds = 60
			return r
		}(), wantGrace: 900, wantDeadline: 900 + 60 + RestartMarginSeconds, wantTTL: 300, wantPolicy: FailurePolicyFail},
		{name: "what the creator set is kept", r: func() *ContainerRecreateRequest {
			r := request("slow")
			r.Spec.Strategy = ContainerRecreateRequestStrategy{FailurePolicy: FailurePolicyIgnore, TerminationGracePeriodSeconds: ptr.To[int64](3)}
			r.Spec.ActiveDeadlineSeconds, r.Spec.TTLSecondsAfterFinished = ptr.To[int64](30), ptr.To[int32](0)
			return r
		}(), wantGrace: 3, wantDeadline: 30, wantTTL: 0, wantPolicy: FailurePolicyIgnore},
		{name: "no container: the pod's", r: request(), wantGrace: 45, wantDeadline: 600, wantTTL: 300, wantPolicy: FailurePolicyFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.SetDefaults(pod, probeGrace)
			s := tc.r.Spec
			if *s.Strategy.TerminationGracePeriodSeconds != tc.wantGrace || *s.ActiveDeadlineSeconds != tc.wantDeadline ||
				*s.TTLSecondsAfterFinished != tc.wantTTL || s.Strategy.FailurePolicy != tc.wantPolicy {
				t.Fatalf("grace %d deadline %d ttl %d policy %s; want %d %d %d %s", *s.Strategy.TerminationGracePeriodSeconds,
					*s.ActiveDeadlineSeconds, *s.TTLSecondsAfterFinished, s.Strategy.FailurePolicy,
					tc.wantGrace, tc.wantDeadline, tc.wantTTL, tc.wantPolicy)
			}
			want := map[string]string{LabelCRRPodUID: "uid-web", LabelCRRNodeName: "node-1"}
			for k, v := range want {
				if tc.r.Labels[k] != v {
					t.Fatalf("labels %v, want %v", tc.r.Labels, want)
				}
			}
			// Whether a request is active is its phase: no label says it.
			if _, ok := tc.r.Labels["crr.enhancedliveness.io/active"]; ok {
				t.Fatalf("labels %v: an active label", tc.r.Labels)
			}
			// A request that went through SetDefaults and one that did not agree on the deadline.
			if got := tc.r.ActiveDeadline(); got != time.Duration(tc.wantDeadline)*time.Second {
				t.Fatalf("ActiveDeadline = %v", got)
			}
		})
	}
}

// A request that did not go through SetDefaults (the webhook was off) gets the deadline
// SetDefaults would have written for its grace period.
func TestActiveDeadlineWithoutDefaults(t *testing.T) {
	r := &ContainerRecreateRequest{Spec: ContainerRecreateRequestSpec{Strategy: ContainerRecreateRequestStrategy{
		TerminationGracePeriodSeconds: ptr.To[int64](900), MinStartedSeconds: 20}}}
	if got, want := r.ActiveDeadline(), time.Duration(900+20+RestartMarginSeconds)*time.Second; got != want {
		t.Fatalf("ActiveDeadline = %v, want %v", got, want)
	}
}

func TestStopInFlight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status ContainerRecreateRequestStatus
		want   bool
	}{
		{name: "no status"},
		{name: "stop about to begin is recorded as begun", status: ContainerRecreateRequestStatus{Phase: RecreateRecreating,
			ContainerRecreateStates: []ContainerRecreateState{{Name: "app", Phase: RecreateRecreating, ContainerID: "containerd://1", StopInFlight: true}}},
			want: true},
		{name: "stop returned", status: ContainerRecreateRequestStatus{Phase: RecreateRecreating,
			ContainerRecreateStates: []ContainerRecreateState{{Name: "app", Phase: RecreateRecreating, ContainerID: "containerd://1", IsKilled: true}}}},
		{name: "failed while the second container's stop runs", status: ContainerRecreateRequestStatus{Phase: RecreateFailed,
			ContainerRecreateStates: []ContainerRecreateState{
				{Name: "a", Phase: RecreateFailed},
				{Name: "b", Phase: RecreateRecreating, ContainerID: "containerd://2", StopInFlight: true}}},
			want: true},
		{name: "failed, stop returned with an error", status: ContainerRecreateRequestStatus{Phase: RecreateFailed,
			ContainerRecreateStates: []ContainerRecreateState{{Name: "app", Phase: RecreateFailed, ContainerID: "containerd://1"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &ContainerRecreateRequest{Status: tc.status}
			if got := r.StopInFlight(); got != tc.want {
				t.Errorf("StopInFlight() = %v, want %v", got, tc.want)
			}
		})
	}
}
