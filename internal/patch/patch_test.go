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

package patch

import (
	"context"
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

const (
	pending    = appsv1alpha1.RecreatePending
	recreating = appsv1alpha1.RecreateRecreating
	failed     = appsv1alpha1.RecreateFailed
)

func request() *appsv1alpha1.ContainerRecreateRequest {
	return &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: "p",
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}}},
	}
}

// otherWriter sets the status as another writer would, after the helper's copy was read.
func otherWriter(t *testing.T, c client.Client, phase appsv1alpha1.ContainerRecreateRequestPhase, msg string) {
	t.Helper()
	r := &appsv1alpha1.ContainerRecreateRequest{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "r"}, r); err != nil {
		t.Fatal(err)
	}
	r.Status.Phase, r.Status.Message = phase, msg
	if err := c.Status().Update(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// toRecreating is a judge: a request someone else finished is left as it is, any other is set
// Recreating (its message left alone). It records the message of each object it judged.
func toRecreating(seen *[]string) Judge[*appsv1alpha1.ContainerRecreateRequest] {
	return func(r *appsv1alpha1.ContainerRecreateRequest) (bool, error) {
		*seen = append(*seen, r.Status.Message)
		if r.Status.Phase.Finished() {
			return false, nil
		}
		r.Status.Phase = recreating
		return true, nil
	}
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		// initial is the status the object is created with; between is what another writer
		// writes after the helper's copy was read (none when its phase is empty).
		initial, between appsv1alpha1.ContainerRecreateRequestStatus
		// conflicts answers that many patches with a Conflict, whatever their resourceVersion.
		conflicts int
		attempts  int
		noJudge   bool
		// want: the result, the judge's calls (the first judgement included), the status stored.
		wantWritten   bool
		wantConflicts int
		wantCalls     int
		wantStatus    appsv1alpha1.ContainerRecreateRequestStatus
		wantErr       func(error) bool
		// wantSeen, when set, is the message of each object the judge was given.
		wantSeen []string
	}{
		{name: "fresh copy: one judgement, one write",
			wantWritten: true, wantCalls: 1, wantStatus: appsv1alpha1.ContainerRecreateRequestStatus{Phase: recreating}},
		{name: "stale copy: conflict, re-read, judged again on the fresh object, written on it",
			between:     appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending, Message: "from the other writer"},
			wantWritten: true, wantConflicts: 1, wantCalls: 2,
			wantStatus: appsv1alpha1.ContainerRecreateRequestStatus{Phase: recreating, Message: "from the other writer"}},
		{name: "stale copy, and the fresh object needs nothing: no write, no error",
			between:       appsv1alpha1.ContainerRecreateRequestStatus{Phase: failed, Message: "failed by the manager"},
			wantConflicts: 1, wantCalls: 2,
			wantStatus: appsv1alpha1.ContainerRecreateRequestStatus{Phase: failed, Message: "failed by the manager"}},
		{name: "re-read into a clean object: the judge sees the fresh object, not fields of the judged copy",
			initial:     appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending, Message: "old"},
			between:     appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending},
			wantWritten: true, wantConflicts: 1, wantCalls: 2, wantSeen: []string{"old", ""},
			wantStatus: appsv1alpha1.ContainerRecreateRequestStatus{Phase: recreating}},
		{name: "conflicts until the last attempt: the Conflict is returned",
			conflicts: 3, attempts: 3, wantConflicts: 3, wantCalls: 3, wantErr: apierrors.IsConflict},
		{name: "conflicts below the attempts: written",
			conflicts: 2, attempts: 3, wantWritten: true, wantConflicts: 2, wantCalls: 3,
			wantStatus: appsv1alpha1.ContainerRecreateRequestStatus{Phase: recreating}},
		{name: "no judge for a second judgement: the conflict is returned at once",
			between: appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending}, noJudge: true,
			wantConflicts: 1, wantCalls: 1, wantErr: apierrors.IsConflict,
			wantStatus: appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := request()
			obj.Status = tc.initial
			conflicts := tc.conflicts
			c := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(obj).
				WithStatusSubresource(&appsv1alpha1.ContainerRecreateRequest{}).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string,
					obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
					if conflicts > 0 {
						conflicts--
						return apierrors.NewConflict(appsv1alpha1.GroupVersion.WithResource("containerrecreaterequests").GroupResource(),
							obj.GetName(), errors.New("injected"))
					}
					return c.SubResource(sub).Patch(ctx, obj, p, opts...)
				}}).Build()

			mine := &appsv1alpha1.ContainerRecreateRequest{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), mine); err != nil {
				t.Fatal(err)
			}
			if tc.between.Phase != "" {
				otherWriter(t, c, tc.between.Phase, tc.between.Message)
			}
			var seen []string
			judge := toRecreating(&seen)
			var res Result
			var err error
			if tc.noJudge {
				h := NewHelper(mine, c, nil)
				write, _ := judge(mine)
				res, err = h.Patch(context.Background(), mine, write, nil)
			} else {
				res, err = Status(context.Background(), c, nil, mine, judge, Attempts(tc.attempts))
			}
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !tc.wantErr(err) {
				t.Fatalf("error %v", err)
			}
			if res.Written != tc.wantWritten || res.Conflicts != tc.wantConflicts || len(seen) != tc.wantCalls {
				t.Fatalf("result %+v after %d judgement(s); want written %v, %d conflict(s), %d judgement(s)",
					res, len(seen), tc.wantWritten, tc.wantConflicts, tc.wantCalls)
			}
			if tc.wantSeen != nil && !slices.Equal(seen, tc.wantSeen) {
				t.Fatalf("the judge saw messages %q, want %q", seen, tc.wantSeen)
			}
			if tc.wantErr != nil && tc.wantStatus.Phase == "" {
				return
			}
			stored := &appsv1alpha1.ContainerRecreateRequest{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), stored); err != nil {
				t.Fatal(err)
			}
			if stored.Status.Phase != tc.wantStatus.Phase || stored.Status.Message != tc.wantStatus.Message {
				t.Fatalf("stored status %+v, want %+v", stored.Status, tc.wantStatus)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme()).
		WithStatusSubresource(&appsv1alpha1.ContainerRecreateRequest{}).Build()
	var seen []string
	_, err := Status(context.Background(), c, nil, request(), toRecreating(&seen))
	if !apierrors.IsNotFound(err) {
		t.Fatalf("error %v, want NotFound", err)
	}
}

// The judge's own error ends the write, before any patch.
func TestJudgeError(t *testing.T) {
	obj := request()
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(obj).
		WithStatusSubresource(&appsv1alpha1.ContainerRecreateRequest{}).Build()
	boom := errors.New("cannot judge")
	res, err := Status(context.Background(), c, nil, obj, func(*appsv1alpha1.ContainerRecreateRequest) (bool, error) {
		return true, boom
	})
	if !errors.Is(err, boom) || res.Written {
		t.Fatalf("%+v, %v", res, err)
	}
}
