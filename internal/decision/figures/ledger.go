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

package figures

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultSize bounds a Ledger: the container instances whose failure it remembers.
const DefaultSize = 10000

// entry is what a Ledger remembers of one container instance's failure.
type entry[T any] struct {
	tag     T         // the caller's, given back with the instance's figures
	kubelet time.Time // the failure's threshold moment
	verdict *Verdict  // Shadow: the engine's latest verdict
	// restarted: the kubelet restarted the instance (Shadow).
	restarted bool
	// avoided and agreed: counted.
	avoided, agreed bool
}

// Ledger counts each container instance's failure once. In Enforce mode the engine's own
// decisions are the figures: the first hold counts avoided, the restart counts agreed (a hold
// released later counts both, the restart with the time the hold added). In Shadow mode the
// kubelet restarts: its restart of an instance (another instance of the container runs) is
// paired with the engine's latest verdict on that instance's failure, and counted once; a
// kubelet restart of an instance the engine saw no failure of is never counted. The oldest instances
// are forgotten past its size. Each instance carries its caller's tag (the last one given), given
// back with its figures. Safe for concurrent use.
type Ledger[T any] struct {
	mu      sync.Mutex
	size    int
	entries map[Key]*entry[T]
	byPod   map[types.UID]map[Key]struct{}
	order   []Key // insertion order, oldest first, for forgetting past size
}

// NewLedger returns a ledger of size instances (DefaultSize if size <= 0).
func NewLedger[T any](size int) *Ledger[T] {
	if size <= 0 {
		size = DefaultSize
	}
	return &Ledger[T]{size: size, entries: map[Key]*entry[T]{}, byPod: map[types.UID]map[Key]struct{}{}}
}

// Enforce records the engine's decision on an Enforce pod's failure whose threshold moment is
// kubelet: it returns the figure and true the first time the instance is held, and the first
// time it is restarted.
func (l *Ledger[T]) Enforce(k Key, kubelet time.Time, v Verdict, tag T) (Counted[T], bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.get(k)
	e.tag = tag
	if e.kubelet.IsZero() {
		e.kubelet = kubelet
	}
	switch {
	case v.Restart && !e.agreed:
		e.agreed = true
	case !v.Restart && !e.avoided && !e.agreed:
		e.avoided = true
	default:
		return Counted[T]{}, false
	}
	return Counted[T]{Figure: Classify(e.kubelet, v), Tag: e.tag}, true
}

// ShadowVerdict records the engine's verdict on a Shadow pod's failure (ShadowVerdict builds
// it): the figure and true when the kubelet already restarted the instance and it was not
// counted yet. A restart verdict keeps the time of the first one: when the engine would have
// restarted.
func (l *Ledger[T]) ShadowVerdict(k Key, kubelet time.Time, v Verdict, tag T) (Counted[T], bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.get(k)
	e.tag = tag
	if e.kubelet.IsZero() {
		e.kubelet = kubelet
	}
	if e.avoided || e.agreed {
		return Counted[T]{}, false
	}
	if e.verdict == nil || !v.Restart || !e.verdict.Restart {
		e.verdict = &v
	}
	return l.pair(e)
}

// Running records which instance of the pod's container runs now (its containerID; "" when none
// does): an instance of the container the engine judged a failure of that was replaced by
// another is one the kubelet restarted (the operator never restarts a Shadow pod). It returns
// the figures of the instances paired with their verdict now.
func (l *Ledger[T]) Running(pod types.UID, container, id string) []Counted[T] {
	if id == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Counted[T]
	for k := range l.byPod[pod] {
		e := l.entries[k]
		if k.Container != container || k.ContainerID == id || e.restarted {
			continue
		}
		e.restarted = true
		if f, ok := l.pair(e); ok {
			out = append(out, f)
		}
	}
	return out
}

// Counted is a figure newly counted, with the tag of its instance.
type Counted[T any] struct {
	Figure
	Tag T
}

// pair counts a Shadow instance once both the kubelet's restart and the engine's verdict are known.
func (l *Ledger[T]) pair(e *entry[T]) (Counted[T], bool) {
	if !e.restarted || e.verdict == nil || e.avoided || e.agreed {
		return Counted[T]{}, false
	}
	f := Classify(e.kubelet, *e.verdict)
	e.avoided, e.agreed = f.Kind == Avoided, f.Kind == Agreed
	return Counted[T]{Figure: f, Tag: e.tag}, true
}

// Len is how many instances the ledger remembers.
func (l *Ledger[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// get returns the instance's entry, remembering it (and forgetting the oldest past size) if new.
func (l *Ledger[T]) get(k Key) *entry[T] {
	if e, ok := l.entries[k]; ok {
		return e
	}
	for len(l.entries) >= l.size && len(l.order) > 0 {
		l.forget(l.order[0])
		l.order = l.order[1:]
	}
	e := &entry[T]{}
	l.entries[k] = e
	if l.byPod[k.Pod] == nil {
		l.byPod[k.Pod] = map[Key]struct{}{}
	}
	l.byPod[k.Pod][k] = struct{}{}
	l.order = append(l.order, k)
	return e
}

func (l *Ledger[T]) forget(k Key) {
	delete(l.entries, k)
	if delete(l.byPod[k.Pod], k); len(l.byPod[k.Pod]) == 0 {
		delete(l.byPod, k.Pod)
	}
}
