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

package restarthold

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// However many changes the memory tells while the records' writer is busy, before its controller
// started or after, each record is queued, once: nothing is dropped, and the write takes what
// the memory has when it runs.
func TestHoldRecordsQueueEveryChange(t *testing.T) {
	const n = 5000
	keys := make([]rules.HoldKey, n)
	for i := range keys {
		keys[i] = rules.HoldKey{Workload: rules.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "Deployment",
			Name: fmt.Sprintf("web-%d", i)}, Container: "app"}
	}
	r := &Records{keys: map[types.NamespacedName]rules.HoldKey{}, pending: map[types.NamespacedName]struct{}{}}
	r.Notify(keys[:n/2]) // before the controller started
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if err := r.start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	r.Notify(keys[n/4:]) // after: a quarter told twice, while none was written yet
	r.Notify(keys[n-1:]) // the last key's canary, say
	if q.Len() != n {
		t.Fatalf("%d records queued, want %d", q.Len(), n)
	}
	seen := map[types.NamespacedName]bool{}
	for q.Len() > 0 {
		req, _ := q.Get()
		seen[req.NamespacedName] = true
		q.Done(req)
	}
	for _, k := range keys {
		if name := holdRecordKey(k); !seen[name] || r.keys[name] != k {
			t.Fatalf("the record of %v was not queued", k)
		}
	}
}
