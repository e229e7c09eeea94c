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

package restarts

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

func TestCounters(t *testing.T) {
	a := protection.PolicyKey{Namespace: "ns", Name: "a"}
	b := protection.PolicyKey{Namespace: "ns", Name: "b"}
	t0 := time.Unix(1000, 0)
	c := NewCounters()
	var rec CountRecorder = c
	var read CountReader = c

	rec.Held([]protection.PolicyKey{a, b}, protection.ReasonFailureStorm)
	rec.Held([]protection.PolicyKey{a}, protection.ReasonFailureStorm)
	rec.Requested([]protection.PolicyKey{a}, t0)
	written := read.Counts(a) // what a status write took
	if written.Requested != 1 || written.Held[protection.ReasonFailureStorm] != 2 || !written.LastRestart.Equal(t0) {
		t.Fatalf("counts of a = %+v", written)
	}
	written.Held[protection.ReasonDryRun] = 99 // a copy: changing it changes nothing
	if read.Counts(a).Held[protection.ReasonDryRun] != 0 {
		t.Fatal("Counts must return a copy")
	}

	rec.Requested([]protection.PolicyKey{a}, t0.Add(time.Minute))
	rec.Requested([]protection.PolicyKey{a}, t0) // out of order: LastRestart keeps the latest
	rec.Held([]protection.PolicyKey{a}, protection.ReasonRateLimited)
	delta := read.Counts(a).Sub(read.Counts(a))
	if !delta.IsZero() {
		t.Fatalf("x.Sub(x) = %+v", delta)
	}
	base := Counts{Requested: 1, Held: map[protection.Reason]int64{protection.ReasonFailureStorm: 2}}
	delta = read.Counts(a).Sub(base)
	if delta.Requested != 2 || delta.Held[protection.ReasonRateLimited] != 1 || len(delta.Held) != 1 ||
		!delta.LastRestart.Equal(t0.Add(time.Minute)) || delta.IsZero() {
		t.Fatalf("delta = %+v", delta)
	}
	// Counters reset (the policy was deleted and created again): everything counted is new.
	reset := Counts{Requested: 1, Held: map[protection.Reason]int64{protection.ReasonDryRun: 1}}
	if d := reset.Sub(read.Counts(a)); d.Requested != 1 || d.Held[protection.ReasonDryRun] != 1 {
		t.Fatalf("after a reset, delta = %+v", d)
	}
	if got := read.Counts(b); got.Requested != 0 || got.Held[protection.ReasonFailureStorm] != 1 {
		t.Fatalf("counts of b = %+v", got)
	}
	rec.Forget(b)
	if got := read.Counts(b); !got.IsZero() {
		t.Fatalf("a forgotten policy counts %+v", got)
	}
}

func TestWorkloads(t *testing.T) {
	web := protection.WorkloadKey{Namespace: "ns", Group: "apps", Kind: "Deployment", Name: "web"}
	w := NewWorkloads()
	w.Learn("pod-1", "rs-1", web)
	w.Learn("pod-2", "", web)
	for _, uid := range []string{"pod-1", "pod-2", "rs-1"} {
		if k, ok := w.Of(types.UID(uid)); !ok || k != web {
			t.Errorf("Of(%s) = %v %v", uid, k, ok)
		}
	}
	w.ForgetPod("pod-1")
	w.ForgetOwner("rs-1")
	if _, ok := w.Of("pod-1"); ok {
		t.Error("a forgotten pod is still known")
	}
	if _, ok := w.Of("rs-1"); ok {
		t.Error("a forgotten owner is still known")
	}
}
