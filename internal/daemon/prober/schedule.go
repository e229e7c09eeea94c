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
package prober

import (
	"context"
	"time"
)

// The schedule of a worker: a timer between runs, a goroutine per run (see worker's mu).

func periodOf(t *Target) time.Duration { return time.Duration(t.Probe.PeriodSeconds) * time.Second }

// setTarget swaps in a new spec of the same probe; the schedule picks it up without a restart.
func (w *worker) setTarget(t *Target) {
	old := w.target.Swap(t)
	if !handlersEqual(&old.Probe, &t.Probe) {
		w.handlerChanged.Store(true)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// Not started yet, or a run in flight: the start, or the run's end, reads the new period.
	if w.ctx == nil || w.running || w.stopped {
		return
	}
	np := periodOf(t)
	if np == w.period {
		return
	}
	// A new period counts from the last run (or from now if none ran yet).
	w.period = np
	if !w.last.IsZero() {
		w.next = w.last.Add(np)
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.armLocked(w.m.Clock.Now())
}

// start schedules the worker's runs until stop, or until its pod is finished.
func (w *worker) start(ctx context.Context) {
	w.m.wg.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx = ctx
	w.period = periodOf(w.target.Load())
	now := w.m.Clock.Now()
	w.next = now
	// Right after a daemon start every worker would fire at once: spread the first runs.
	if w.period > now.Sub(w.m.started) {
		w.next = now.Add(w.m.Jitter(w.period))
	}
	w.armLocked(now)
}

// stop ends the schedule; a run in flight finishes first (the manager's Start waits for it).
func (w *worker) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
	if !w.running {
		w.finishLocked()
	}
}

func (w *worker) finishLocked() {
	w.stopped = true
	if !w.finished {
		w.finished = true
		if w.ctx != nil { // started: the manager waits for it
			w.m.wg.Done()
		}
	}
}

// armLocked sets the timer for the next run. The run goes on a goroutine of its own: the fake
// clock of the tests calls timer functions synchronously, under its lock.
func (w *worker) armLocked(now time.Time) {
	w.seq++
	seq := w.seq
	w.timer = nil
	if d := w.next.Sub(now); d > 0 {
		w.timer = w.m.Clock.AfterFunc(d, func() { go w.tick(seq) })
		return
	}
	go w.tick(seq)
}

// tick is one run, then the next one scheduled on the period.
func (w *worker) tick(seq uint64) {
	w.mu.Lock()
	if w.stopped || w.running || seq != w.seq {
		w.mu.Unlock()
		return
	}
	w.running = true
	due, ctx := w.next, w.ctx
	w.mu.Unlock()

	start := w.m.Clock.Now()
	lag := start.Sub(due)
	ScheduleLag.Observe(lag.Seconds())
	if w.m.LagObserver != nil {
		w.m.LagObserver(lag)
	}
	alive := w.doProbe(ctx)

	w.mu.Lock()
	defer w.mu.Unlock()
	w.running, w.last = false, start
	if !alive || w.stopped || ctx.Err() != nil {
		w.finishLocked()
		return
	}
	w.period = periodOf(w.target.Load())
	w.next = w.next.Add(w.period)
	now := w.m.Clock.Now()
	if !w.next.After(now) {
		// The run overran its period: skip the missed slots, as a ticker drops ticks.
		w.next = w.next.Add((now.Sub(w.next)/w.period + 1) * w.period)
	}
	w.armLocked(now)
}
