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
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// MaxMessageBytes caps a message in the node's report (the API allows 1 KiB): the reason fits
// (exit code, HTTP status, error class), and a node with many failing probes keeps its report
// small (report.Writer.Budget).
const MaxMessageBytes = appsv1alpha1.ReportMessageLength

// Key identifies a probe worker and its result. Never the containerID: a container restart must
// not orphan a result, and a result must never be attributed to another pod's container.
type Key struct {
	PodUID    types.UID
	Container string
	Probe     string
}

func (k Key) String() string { return fmt.Sprintf("%s/%s/%s", k.PodUID, k.Container, k.Probe) }

// Entry is the last reported result of one probe.
type Entry struct {
	State       appsv1alpha1.ProbeState
	ContainerID string
	Message     string
	// LastProbeTime moves on every run; LastTransitionTime only when State or ContainerID change.
	LastProbeTime      time.Time
	LastTransitionTime time.Time
	// FailingSince is when the current run of failures began; zero while the probe passes.
	FailingSince time.Time
}

// Write says how soon the report writer sends a change recorded in the cache: the one who
// records the change decides, where it records it.
type Write uint8

const (
	// WriteInWindow: with the other changes of the writer's window (report.Writer.Window,
	// report.DefaultWriteWindow): at once after a quiet window, else gathered until the window
	// since the last write has passed.
	WriteInWindow Write = iota
	// WriteSoon: report.Writer.FailureWindow (report.DefaultFailureWindow) after the last write,
	// and no sooner than a window after the write before it: for a probe that became Failed, which
	// the restart decision waits for.
	WriteSoon
)

// Cache holds the reported result of every probe of the node, keyed by (pod UID, container,
// probe name). Changes that the results must show raise a signal on Changed(), and on
// NewFailure() too when recorded WriteSoon. A run that changes nothing only moves an atomic
// timestamp under the read lock, so thousands of workers do not serialise on the cache.
type Cache struct {
	mu      sync.RWMutex
	entries map[Key]*entry
	changed chan struct{}
	soon    chan struct{}
}

type entry struct {
	Entry     // LastProbeTime is kept in lastProbe
	lastProbe atomic.Int64
}

func newEntry(e Entry) *entry {
	n := &entry{Entry: e}
	n.lastProbe.Store(e.LastProbeTime.UnixNano())
	return n
}

func (e *entry) get() Entry {
	out := e.Entry
	out.LastProbeTime = time.Unix(0, e.lastProbe.Load()).UTC()
	return out
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{entries: map[Key]*entry{}, changed: make(chan struct{}, 1), soon: make(chan struct{}, 1)}
}

// NewFailure receives a value after one or more changes recorded WriteSoon (coalesced): probes
// that became Failed. Changed receives one too.
func (c *Cache) NewFailure() <-chan struct{} { return c.soon }

// Changed receives a value after one or more reportable changes (coalesced).
func (c *Cache) Changed() <-chan struct{} { return c.changed }

// Signal raises the change signal without a change of its own (e.g. a new spec generation).
func (c *Cache) Signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *Cache) signal(w Write) {
	if w == WriteSoon {
		select {
		case c.soon <- struct{}{}:
		default:
		}
	}
	c.Signal()
}

// Set records state for k taken on containerID at now. It returns true (and signals, as w says)
// when the state or the container changed, or the reason of an Unknown state; otherwise it only
// moves LastProbeTime. LastTransitionTime moves only with the state or the container.
func (c *Cache) Set(k Key, state appsv1alpha1.ProbeState, containerID, message string, now time.Time, w Write) bool {
	message = truncate.String(message, MaxMessageBytes)
	c.mu.Lock()
	old, ok := c.entries[k]
	if ok && old.State == state && old.ContainerID == containerID {
		old.lastProbe.Store(now.UnixNano())
		// Success output (an HTTP body) may differ on every run and is not worth a write; the
		// reason of an Unknown state (e.g. the container stopped) is.
		changed := state == appsv1alpha1.ProbeUnknown && old.Message != message
		if changed {
			e := old.get()
			e.Message = message
			c.entries[k] = newEntry(e)
		}
		c.mu.Unlock()
		if changed {
			c.signal(w)
		}
		return changed
	}
	e := Entry{State: state, ContainerID: containerID, Message: message, LastProbeTime: now, LastTransitionTime: now}
	if ok && old.ContainerID == containerID {
		e.FailingSince = old.FailingSince // a run of failures outlives the state it led to
	}
	c.entries[k] = newEntry(e)
	c.mu.Unlock()
	c.signal(w)
	return true
}

// SetFailing records when the current run of failures of k began, or its end (zero). It signals,
// as w says, only when a run starts or ends; a new container (Set) starts without one.
func (c *Cache) SetFailing(k Key, since time.Time, w Write) bool {
	c.mu.Lock()
	old, ok := c.entries[k]
	if !ok || old.FailingSince.IsZero() == since.IsZero() {
		c.mu.Unlock()
		return false
	}
	e := old.get()
	e.FailingSince = since
	c.entries[k] = newEntry(e)
	c.mu.Unlock()
	c.signal(w)
	return true
}

// Touch moves LastProbeTime of an existing entry (a run that changed nothing reportable).
func (c *Cache) Touch(k Key, now time.Time) {
	c.mu.RLock()
	if e, ok := c.entries[k]; ok {
		e.lastProbe.Store(now.UnixNano())
	}
	c.mu.RUnlock()
}

// Get returns the entry of k.
func (c *Cache) Get(k Key) (Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.entries[k]
	if !ok {
		return Entry{}, false
	}
	return e.get(), true
}

// Delete forgets k (its worker stopped) and signals if it was reported.
func (c *Cache) Delete(k Key) {
	c.mu.Lock()
	_, ok := c.entries[k]
	delete(c.entries, k)
	c.mu.Unlock()
	if ok {
		c.Signal()
	}
}

// Len returns the number of entries.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
