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

// Package patch writes an object's status the one way every status writer of the operator does
// (the NodePodProbeReport status writer, the CRR executor, the manager's CRR controller, the policy
// status controller, the NodePodProbe's Mapped condition). The caller changes the object it read; the helper sends the difference as
// a merge patch that carries the resourceVersion the object was read at, so a write judged from a
// stale copy (another writer's, or a cache behind one's own last write) is refused instead of
// overwriting newer status. On that conflict the helper reads the object again and asks the
// caller's judge what the status should be now, and writes that.
package patch

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultAttempts bounds the judgements of one write: the first and those after conflicts.
const DefaultAttempts = 5

// Judge sets obj's status to what it should be, given obj as it was just read, and reports
// whether to write it. A judge that returns true with nothing changed still gets a write: the
// empty patch carries the resourceVersion, so its success proves that the status the judgement
// came from is current (the CRR executor does this before stopping a container).
type Judge[T client.Object] func(obj T) (write bool, err error)

// Result says what a write did.
type Result struct {
	// Written is true when the API server acknowledged a patch.
	Written bool
	// Conflicts counts the conflicts met on the way.
	Conflicts int
}

// Helper writes the status of one object. Make it with NewHelper right after reading the object,
// before changing it.
type Helper[T client.Object] struct {
	client   client.Client
	reader   client.Reader
	attempts int
	base     T
}

// Option changes a Helper.
type Option func(*options)

type options struct{ attempts int }

// Attempts sets how many judgements one write may take (DefaultAttempts when n < 1). One means
// no second judgement: a conflict is returned at once.
func Attempts(n int) Option { return func(o *options) { o.attempts = n } }

// NewHelper remembers obj as read: the base of the patch and the resourceVersion it carries.
// c writes the status; reader reads obj again after a conflict (nil: c). Give the API server's
// reader where c reads from a cache: a cache may not have seen the write that won yet.
func NewHelper[T client.Object](obj T, c client.Client, reader client.Reader, opts ...Option) *Helper[T] {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.attempts < 1 {
		o.attempts = DefaultAttempts
	}
	if reader == nil {
		reader = c
	}
	return &Helper[T]{client: c, reader: reader, attempts: o.attempts, base: obj.DeepCopyObject().(T)}
}

// Patch writes obj's status as changed since the helper read it, if write is true. On a conflict
// it reads obj again (into obj), calls judge on it, and writes what judge decided, up to the
// helper's attempts in all; judge may be nil when no second judgement is wanted (a conflict is
// then returned). A missing object is returned as the API's NotFound error, and a write still in
// conflict after the last attempt as the API's Conflict error, wrapped.
func (h *Helper[T]) Patch(ctx context.Context, obj T, write bool, judge Judge[T]) (Result, error) {
	var res Result
	for attempt := 1; ; attempt++ {
		if !write {
			return res, nil
		}
		err := h.client.Status().Patch(ctx, obj,
			client.MergeFromWithOptions(h.base, client.MergeFromWithOptimisticLock{}))
		switch {
		case err == nil:
			res.Written = true
			h.base = obj.DeepCopyObject().(T)
			return res, nil
		case !apierrors.IsConflict(err):
			return res, err
		}
		res.Conflicts++
		if judge == nil || attempt >= h.attempts {
			return res, fmt.Errorf("writing the status of %s: still conflicting after %d attempt(s): %w",
				client.ObjectKeyFromObject(obj), attempt, err)
		}
		if err := reread(ctx, h.reader, obj); err != nil {
			return res, err
		}
		h.base = obj.DeepCopyObject().(T)
		if write, err = judge(obj); err != nil {
			return res, err
		}
	}
}

// Status judges obj as read and writes what the judgement decided, judging again after each
// conflict: NewHelper, judge and Patch in one, for a writer with nothing to do between the
// judgement and the write.
func Status[T client.Object](ctx context.Context, c client.Client, reader client.Reader, obj T, judge Judge[T],
	opts ...Option) (Result, error) {
	h := NewHelper(obj, c, reader, opts...)
	write, err := judge(obj)
	if err != nil {
		return Result{}, err
	}
	return h.Patch(ctx, obj, write, judge)
}

// reread reads obj again into a zeroed obj: decoding into the changed copy would keep the fields
// the fresh object leaves out (an omitted message, say) as the judgement had set them.
func reread(ctx context.Context, reader client.Reader, obj client.Object) error {
	key := client.ObjectKeyFromObject(obj)
	gvk := obj.GetObjectKind().GroupVersionKind()
	v := reflect.ValueOf(obj).Elem()
	v.Set(reflect.Zero(v.Type()))
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return reader.Get(ctx, key, obj)
}
