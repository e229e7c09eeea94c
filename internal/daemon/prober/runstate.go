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
	"time"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
)

// runState is what a worker remembers between the runs of one container: the current run of
// equal results, what it reported, and the events and early failure mark it wrote. Its
// transitions are pure; the worker writes what they return (record).
type runState struct {
	// result and count are the current run of equal results (Unknown and 0: none yet), counted
	// toward a threshold (docs/probe-semantics.md #8).
	result check.Result
	count  int
	// failingSince is when the current run of failures began.
	failingSince time.Time
	// reported is what the worker's reports say of the container.
	reported reported
	// marked: the cache may hold this worker's early failure mark, which a success clears;
	// without it every success would take the cache's write lock for nothing. A new worker
	// starts marked: the cache may hold a mark from before.
	marked bool
	// erroring and warned: the last run errored / warned, and its event was sent; the next
	// such run sends none.
	erroring, warned bool
}

// reported is what a worker's reports say of its container.
type reported uint8

const (
	// reportedNothing: no result since the container appeared, or since it stopped running.
	reportedNothing reported = iota
	// reportedSuccess: Succeeded; a further success only moves lastProbeTime.
	reportedSuccess
	// reportedFailure: Failed, and held there: further failures of the same container are
	// neither counted nor reported until a success or a new container (docs/probe-semantics.md #9).
	reportedFailure
)

// newRunState is the state of a new worker.
func newRunState() runState { return runState{marked: true} }

// newContainer starts over on another container (docs/probe-semantics.md #9, #10). The early
// failure mark is kept: the cache starts the new container without one, so a stale mark costs
// one clear that changes nothing.
func (s runState) newContainer() runState { return runState{marked: s.marked} }

// newHandler restarts counting: results of the old handler say nothing about the new one.
func (s runState) newHandler() runState {
	s.result, s.count = check.Unknown, 0
	return s
}

// notRunning: the container stopped and was reported Unknown, so its next success is news. A
// reported failure stays held (docs/probe-semantics.md #11).
func (s runState) notRunning() runState {
	if s.reported == reportedSuccess {
		s.reported = reportedNothing
	}
	return s
}

// mark is a change of the early failure mark.
type mark uint8

const (
	// The zero mark changes nothing.
	_ mark = iota
	// markSet: a run of failures is evidence from its second failure (or its first, with a
	// threshold of 1); the mark says when the run began (failingSince).
	markSet
	// markClear: a success ended the run of failures.
	markClear
)

// runEvent is an event a run sends besides Unhealthy (which goes with a reported failure).
type runEvent uint8

const (
	// The zero event is none.
	_ runEvent = iota
	// eventErrored: errors started (docs/probe-semantics.md #14).
	eventErrored
	// eventWarning: warnings started (an unfollowed redirect, docs/probe-semantics.md #20).
	eventWarning
)

// effects are what one run changes outside the run state.
type effects struct {
	// counted is the run's result in the probe counter: runSuccessful, runFailed or runUnknown.
	counted int
	event   runEvent
	mark    mark
	// report is the state to report, Succeeded or Failed; empty when only lastProbeTime moves.
	report appsv1alpha1.ProbeState
}

// next folds in the result of a run that started at at (Unknown: the run errored), for a probe
// with the given thresholds.
func (s runState) next(res check.Result, at time.Time, failureThreshold, successThreshold int32) (runState, effects) {
	var e effects
	if res == check.Unknown {
		// docs/probe-semantics.md #14: dropped, counters unchanged; one event when errors start.
		e.counted = runUnknown
		if !s.erroring {
			e.event = eventErrored
		}
		s.erroring = true
		return s, e
	}
	s.erroring = false
	if res == check.Warning {
		if !s.warned {
			e.event = eventWarning
		}
		s.warned, res = true, check.Success
	} else {
		s.warned = false
	}
	e.counted = runSuccessful
	if res == check.Failure {
		e.counted = runFailed
		if s.reported == reportedFailure {
			// Δ docs/probe-semantics.md #9: held, probed only to see the container recover.
			s.result, s.count = res, 0
			return s, e
		}
	}
	if res == s.result {
		s.count++
	} else {
		s.result, s.count = res, 1
	}
	if res == check.Failure && s.count == 1 {
		s.failingSince = at
	}
	// Early storm evidence: a single failed run is none (a flaky probe must not make its pod a
	// suspect); the second in a row is, below the threshold; a success ends it.
	switch {
	case res == check.Failure && (s.count == 2 || s.count == 1 && failureThreshold <= 1):
		e.mark, s.marked = markSet, true
	case res == check.Success && s.marked:
		e.mark, s.marked = markClear, false
	}
	// docs/probe-semantics.md #8: a run of equal results must reach the threshold to be reported.
	switch {
	case res == check.Failure && s.count >= int(failureThreshold):
		// Δ docs/probe-semantics.md #9: the kubelet would kill the container here; the decision
		// controller may hold the restart, so the worker goes on probing it, counting from scratch.
		e.report, s.reported, s.count = appsv1alpha1.ProbeFailed, reportedFailure, 0
	case res == check.Success && s.count >= int(successThreshold) && s.reported != reportedSuccess:
		// A recovery without a restart: the next failure counts from scratch.
		e.report, s.reported = appsv1alpha1.ProbeSucceeded, reportedSuccess
	}
	return s, e
}
