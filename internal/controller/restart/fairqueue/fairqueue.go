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

// Package fairqueue is a work queue that serves namespaces in turn: one item of each namespace
// with work, round after round, each namespace's items in the order they came. A namespace that
// queues thousands of items (a large fleet held in DryRun, a stream of failures) delays another
// namespace's next item by at most one item per busy namespace, not by its whole backlog.
package fairqueue

import (
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Queue is the storage of a client-go work queue (workqueue.Queue): the work queue keeps
// deduplication, processing and delays, this only decides which waiting item comes next.
type Queue struct {
	byNamespace map[string][]reconcile.Request
	// turns are the namespaces with waiting items, in the order they are served.
	turns []string
	n     int
}

var _ workqueue.Queue[reconcile.Request] = &Queue{}

// New returns an empty queue.
func New() *Queue { return &Queue{byNamespace: map[string][]reconcile.Request{}} }

// Push adds an item behind its namespace's others; a namespace without waiting items takes the
// last turn of the round.
func (q *Queue) Push(item reconcile.Request) {
	ns := item.Namespace
	if len(q.byNamespace[ns]) == 0 {
		q.turns = append(q.turns, ns)
	}
	q.byNamespace[ns] = append(q.byNamespace[ns], item)
	q.n++
}

// Pop returns the next item of the namespace whose turn it is; that namespace, if it has more,
// waits for the next round.
func (q *Queue) Pop() reconcile.Request {
	ns := q.turns[0]
	q.turns = q.turns[1:]
	items := q.byNamespace[ns]
	item := items[0]
	items[0] = reconcile.Request{}
	if items = items[1:]; len(items) == 0 {
		delete(q.byNamespace, ns)
	} else {
		q.byNamespace[ns] = items
		q.turns = append(q.turns, ns)
	}
	q.n--
	return item
}

// Len is the number of waiting items.
func (q *Queue) Len() int { return q.n }

// Touch does nothing: an item added again while it waits keeps its place.
func (q *Queue) Touch(reconcile.Request) {}

// NewRateLimitingQueue returns a controller's queue (for controller.Options.NewQueue) that serves
// namespaces in turn.
func NewRateLimitingQueue(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{
		Name: name,
		DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[reconcile.Request]{
			Name:  name,
			Queue: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[reconcile.Request]{Name: name, Queue: New()}),
		}),
	})
}
