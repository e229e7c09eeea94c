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

package results

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestCache_TransitionsSignalRepeatsDoNot(t *testing.T) {
	c := NewCache()
	k := Key{PodUID: "u", Container: "c", Probe: "p"}
	t0 := time.Unix(100, 0)
	if !c.Set(k, appsv1alpha1.ProbeSucceeded, "id1", "body 1", t0, WriteInWindow) {
		t.Fatal("first result is a transition")
	}
	<-c.Changed()
	if c.Set(k, appsv1alpha1.ProbeSucceeded, "id1", "body 2", t0.Add(time.Second), WriteInWindow) {
		t.Fatal("same state, other body: not a transition")
	}
	select {
	case <-c.Changed():
		t.Fatal("signalled without a transition")
	default:
	}
	e, _ := c.Get(k)
	if e.Message != "body 1" || !e.LastProbeTime.Equal(t0.Add(time.Second)) || !e.LastTransitionTime.Equal(t0) {
		t.Fatalf("entry %+v", e)
	}
	if !c.Set(k, appsv1alpha1.ProbeSucceeded, "id2", "", t0.Add(2*time.Second), WriteInWindow) {
		t.Fatal("a new container is a transition")
	}
	if !c.Set(k, appsv1alpha1.ProbeUnknown, "id2", "", t0, WriteInWindow) || !c.Set(k, appsv1alpha1.ProbeUnknown, "id2", "container is not running", t0, WriteInWindow) {
		t.Fatal("a new Unknown reason is a change")
	}
	c.Touch(k, t0.Add(time.Hour))
	if e, _ := c.Get(k); !e.LastProbeTime.Equal(t0.Add(time.Hour)) {
		t.Fatal("Touch did not move lastProbeTime")
	}
	c.Delete(k)
	if _, ok := c.Get(k); ok || c.Len() != 0 {
		t.Fatal("Delete kept the entry")
	}
}

func TestCache_MessageCappedAt256BytesOnRuneBoundary(t *testing.T) {
	c := NewCache()
	k := Key{"u", "app", "p"}
	for i, in := range []string{strings.Repeat("é", 2000), strings.Repeat("x", 255) + "é", "bad \xff utf8"} {
		c.Set(k, appsv1alpha1.ProbeFailed, fmt.Sprintf("id%d", i), in, time.Unix(int64(i), 0), WriteSoon)
		e, _ := c.Get(k)
		if len(e.Message) > 256 || !utf8.ValidString(e.Message) {
			t.Errorf("message of %d bytes stored as %d bytes, valid %v", len(in), len(e.Message), utf8.ValidString(e.Message))
		}
	}
	c.Set(k, appsv1alpha1.ProbeFailed, "short", "short", time.Unix(9, 0), WriteSoon)
	if e, _ := c.Get(k); e.Message != "short" {
		t.Errorf("short message changed: %q", e.Message)
	}
}
