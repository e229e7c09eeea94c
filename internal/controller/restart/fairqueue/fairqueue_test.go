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

package fairqueue

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func req(ns string, i int) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: fmt.Sprint("pod-", i)}}
}

func TestServesNamespacesInTurn(t *testing.T) {
	for _, tc := range []struct {
		name string
		push []reconcile.Request
		want []reconcile.Request
	}{
		{"one namespace: in order", []reconcile.Request{req("a", 0), req("a", 1), req("a", 2)},
			[]reconcile.Request{req("a", 0), req("a", 1), req("a", 2)}},
		{"a backlog, then another namespace's item: it comes second",
			[]reconcile.Request{req("a", 0), req("a", 1), req("a", 2), req("a", 3), req("b", 0)},
			[]reconcile.Request{req("a", 0), req("b", 0), req("a", 1), req("a", 2), req("a", 3)}},
		{"three namespaces: round after round",
			[]reconcile.Request{req("a", 0), req("a", 1), req("b", 0), req("b", 1), req("c", 0)},
			[]reconcile.Request{req("a", 0), req("b", 0), req("c", 0), req("a", 1), req("b", 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := New()
			for _, r := range tc.push {
				q.Push(r)
			}
			var got []reconcile.Request
			for q.Len() > 0 {
				got = append(got, q.Pop())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("popped %v, want %v", got, tc.want)
			}
			if len(q.byNamespace) != 0 || len(q.turns) != 0 {
				t.Fatalf("not empty: %+v", q)
			}
		})
	}
}

// Through a controller's queue: a namespace's 1000 waiting items delay another namespace's new
// one by one item; deduplication and delayed adds are the work queue's as ever.
func TestRateLimitingQueue(t *testing.T) {
	q := NewRateLimitingQueue("", workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Millisecond, time.Second))
	defer q.ShutDown()
	for i := range 1000 {
		q.Add(req("dryrun-fleet", i))
	}
	q.Add(req("dryrun-fleet", 0)) // already waiting: not added twice
	q.Add(req("shop", 0))
	if q.Len() != 1001 {
		t.Fatalf("len %d, want 1001", q.Len())
	}
	for i, want := range []reconcile.Request{req("dryrun-fleet", 0), req("shop", 0), req("dryrun-fleet", 1)} {
		got, _ := q.Get()
		if got != want {
			t.Fatalf("item %d: %v, want %v", i, got, want)
		}
		q.Done(got)
	}
	q.AddAfter(req("later", 0), 10*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for q.Len() != 999 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	first, _ := q.Get()
	second, _ := q.Get()
	if q.Len() != 997 || first != req("dryrun-fleet", 2) || second != req("later", 0) {
		t.Fatalf("after a delayed add: %v then %v (%d left)", first, second, q.Len())
	}
}
