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

package rules

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// Doubt holds end. A storm, or restarts that did not help, are reasons to doubt that a restart
// helps, not proof that it hurts: held for ever, a real hang among them would never be restarted,
// where native liveness would restart it. A correlated hang is a question one restart answers, so
// soon after a doubt hold begins one held pod is restarted as a canary (still within the budget
// and the rate limit); if its new container passes its probe and does not fail again soon, a
// restart cures it: the others follow within the budget, past the rate limit. Each canary that
// fails doubles the wait before the next one, up to the policy's maxHold: CrashLoopBackOff's
// shape at workload level. A doubt is about one container of a workload (a HoldKey). A daemon
// that is not reporting is no doubt a canary can answer: no
// restart can run on its node, so those holds end only when it reports again or the pod goes.

// DefaultMaxHold is the maxHold of the default policy and of a policy that sets none.
const DefaultMaxHold = 10 * time.Minute

// FirstCanaryWait is how long a new doubt hold waits before its first canary: time for a
// correlated onset to show how far it reaches (a fleet-wide failure has crossed its threshold on
// every pod by then), short enough that a whole workload that hangs is restarted within a couple
// of minutes.
const FirstCanaryWait = 30 * time.Second

// FirstWait is the wait before a new hold's first canary: FirstCanaryWait, doubled for each
// restart of the key already found not to help (a RestartIneffective hold begins with that
// evidence: those restarts were canaries that failed), at most maxHold.
func FirstWait(maxHold time.Duration, failed int32) time.Duration {
	w := FirstCanaryWait
	for i := int32(0); i < failed && w < maxHold; i++ {
		w *= 2
	}
	return min(w, maxHold)
}

// MaxHold combines the governing policies' maxHold: the longest, since a restart needs every
// policy's leave, and zero (never) if any policy says never.
func (g Governing) MaxHold() (time.Duration, PolicyKey) {
	var out time.Duration
	var by PolicyKey
	for i := range g {
		h := g[i].MaxHold
		if h == 0 {
			return 0, g[i].Key
		}
		if h > out {
			out, by = h, g[i].Key
		}
	}
	return out, by
}

// DoubtHold is a hold of a key (a workload's container): a doubt hold, or a budget hold behind
// pods the operator never restarts (budget.go). Everything but Touched is kept in the API
// (one write per change), on the manager's clock, so that a manager restart or a leader change
// does not start it over.
type DoubtHold struct {
	// Reason is the hold's reason when it began.
	Reason policyv1alpha1.HoldReason
	// Onset is when the hold began; Since when the current wait began, Period how long it lasts
	// (zero: maxHold 0s, no canary ever).
	Onset, Since time.Time
	Period       time.Duration
	// Canaries counts the canaries released so far; Canary is the one in flight.
	Canaries int32
	Canary   *Canary
	// Released is when a canary passed: once its restart has proven to help (DoubtStep.ProvenAt),
	// and for maxHold from then, the held pods go on to the budget, past the rate limit. A restart
	// since the wait began that fails again soon ends it.
	Released time.Time
	// Touched is when a decision last saw the hold (the memory's only: never written).
	Touched time.Time
}

// NextCanary is when the next canary goes: zero while one is in flight, while the held pods are
// released, and when none ever goes. For a budget hold behind pods the operator never restarts,
// it is when those stop counting.
func (h DoubtHold) NextCanary() time.Time {
	if h.Canary != nil || !h.Released.IsZero() || h.Period <= 0 {
		return time.Time{}
	}
	return h.Since.Add(h.Period)
}

// Durable returns the hold without what is not written (Touched): two holds with the same
// Durable are one record in the API.
func (h DoubtHold) Durable() DoubtHold {
	h.Touched = time.Time{}
	if h.Canary != nil {
		k := *h.Canary
		h.Canary = &k
	}
	return h
}

// Canary is the restart released to test a doubt hold: a pod of the key's workload. An eviction
// of a pod of the key (restartEffectiveness.action Evict) takes the same place (ClaimCanary).
type Canary struct {
	Pod                 types.UID
	PodName             string
	Container, Instance string
	// Evicted: the pod was evicted, not restarted; it is judged lost once it is gone.
	Evicted bool
	// At is when the restart was decided; Deadline when, without its new container passing its
	// probe, the canary counts as failed.
	At, Deadline time.Time
}

// CanaryDeadline is how long a canary has to show that its restart helped: the stop's grace
// period, a minute for the kubelet to start the new container, and the time its probe needs to
// fail after a start (SoonAfterRestart). A canary that neither passes nor fails by then is no
// evidence that restarting helps.
func CanaryDeadline(at time.Time, graceSeconds int64, soon time.Duration) time.Time {
	return at.Add(time.Duration(graceSeconds)*time.Second + time.Minute + soon)
}

// CanaryResult is what became of a canary.
type CanaryResult int

const (
	// CanaryPending: its new container has not passed its probe yet, nor failed it.
	CanaryPending CanaryResult = iota
	// CanaryPassed: the canary container's probe passes after the restart.
	CanaryPassed
	// CanaryFailed: the new container failed its probe soon after the restart, or the deadline
	// passed without it passing.
	CanaryFailed
	// CanaryLost: the pod is gone, or the restart never happened (the deadline passed with the
	// old instance still running: its request was not carried out); another held pod may be the
	// canary, and the wait does not double: nothing was learnt.
	CanaryLost
)

// JudgeCanary judges a canary by what the effectiveness breaker sees of its restart (restarts,
// with found: the ones found ineffective now) and by its container's probe (pods as they are,
// each judged for its containers: PodState.For).
func JudgeCanary(k Canary, pods []PodState, restarts []RestartRecord, found []RestartID, now time.Time) CanaryResult {
	same := func(id RestartID) bool {
		return id.Pod == k.Pod && id.Container == k.Container && id.Instance == k.Instance
	}
	for i := range restarts {
		if same(restarts[i].RestartID) && restarts[i].Ineffective {
			return CanaryFailed
		}
	}
	if slices.ContainsFunc(found, same) {
		return CanaryFailed
	}
	i := slices.IndexFunc(pods, func(p PodState) bool { return p.UID == k.Pod })
	if i < 0 {
		return CanaryLost
	}
	running, known := pods[i].Running(k.Container)
	if p := pods[i].For(k.Container); p.Healthy && !p.ActiveCRR && !p.Recovering && !p.Terminating && running != k.Instance {
		return CanaryPassed
	}
	if now.After(k.Deadline) {
		if known && running == k.Instance {
			return CanaryLost
		}
		return CanaryFailed
	}
	return CanaryPending
}

// DoubtStep is what a doubt hold does with one failure a doubt rule would hold.
type DoubtStep struct {
	// Next is the hold as the memory keeps it from now.
	Next DoubtHold
	// Release: the failure goes on to the rules after the doubt rules (budget, rate limit).
	// Canary: it is released as the canary, and its restart is remembered as such.
	Release, Canary bool
	// ProvenAt, once a canary passed, is when its restart has proven to help: its new container
	// has not failed again for the time that judges a restart (CanaryEvidence.Soon) since it
	// passed. Then the held pods are released, past the token buckets (ratelimit.go).
	ProvenAt time.Time
	// Message says, when it holds, how the hold ends.
	Message string
	// Due, when it holds, is how soon deciding again can change that: the canary is due, or its
	// deadline passes. Zero: only a change of the cause can.
	Due time.Duration
}

// CanaryEvidence is what a doubt hold learns of the restarts it released.
type CanaryEvidence struct {
	// Judge tells what became of the canary in flight.
	Judge func(Canary) CanaryResult
	// NotHelped reports whether a restart of the key requested at or after since was found not
	// to help (nil: none was).
	NotHelped func(since time.Time) bool
	// Soon is how long after its start a restarted container failing again means the restart
	// did not help (SoonAfterRestart).
	Soon time.Duration
}

// BoundDoubt applies maxHold (zero: never) to a doubt hold for reason. st is the hold the memory
// keeps (seen: it keeps one); failed counts the key's restarts already found not to help (they
// lengthen a new hold's first wait: FirstWait); ev tells what became of its canary and of the
// restarts it released.
func BoundDoubt(st DoubtHold, seen bool, reason policyv1alpha1.HoldReason, maxHold time.Duration, failed int32,
	ev CanaryEvidence, now time.Time) DoubtStep {
	fresh := func() DoubtHold {
		return DoubtHold{Reason: reason, Onset: now, Since: now, Period: FirstWait(maxHold, failed)}
	}
	if !seen || st.Reason.Kind() != policyv1alpha1.HoldKindDoubt {
		st = fresh() // a new hold, or the key's budget hold becomes a doubt: its waits start now
	}
	st.Touched = now
	if maxHold <= 0 {
		st.Period = 0
		return DoubtStep{Next: st, Message: fmt.Sprintf("held since %s; maxHold is 0s, so only the cause ending ends the hold", stamp.Seconds(st.Onset))}
	}
	if st.Period <= 0 {
		st.Since, st.Period = now, FirstWait(maxHold, failed) // maxHold was 0s until now
	}
	st.Period = min(st.Period, maxHold) // maxHold may have changed since the hold began
	if inFlight(&st, maxHold, ev.Judge, now) {
		return pendingCanary(st, now)
	}
	if !st.Released.IsZero() {
		proven := st.Released.Add(ev.Soon)
		switch {
		case now.Sub(proven) >= maxHold:
			// Released maxHold ago and the doubt is back: a new hold.
			st = fresh()
			st.Touched = now
		case ev.NotHelped != nil && ev.NotHelped(st.Since):
			// A restart since the wait began (the canary's, or one released after it) failed
			// again soon after all: as for a canary that failed, the release ends and the wait
			// doubles.
			st.Since, st.Released = now, time.Time{}
			st.Period = min(2*st.Period, maxHold)
		case now.Before(proven):
			// Passing once is not helping yet: the held pods wait until the canary's new
			// container has not failed again for the time that judges a restart.
			return DoubtStep{Next: st, ProvenAt: proven, Due: proven.Sub(now), Message: fmt.Sprintf(
				"held since %s; canary %d passed its probe at %s: the held pods follow at %s, past the rate limit, unless a restart since %s fails again soon",
				stamp.Seconds(st.Onset), st.Canaries, stamp.Seconds(st.Released), stamp.Seconds(proven), stamp.Seconds(st.Since))}
		default:
			return DoubtStep{Next: st, Release: true, ProvenAt: proven}
		}
	}
	// The canary's moment is written as a time, not as a countdown: the message stays in the
	// policy status (heldPods) and in kubectl enhancedliveness explain long after it was made.
	if due := st.Since.Add(st.Period); due.After(now) {
		return DoubtStep{Next: st, Due: due.Sub(now), Message: fmt.Sprintf(
			"held since %s; one held pod is restarted as canary %d at %s (the wait doubles after a canary fails, up to maxHold %s)",
			stamp.Seconds(st.Onset), st.Canaries+1, stamp.Seconds(due), maxHold)}
	}
	return DoubtStep{Next: st, Release: true, Canary: true}
}

// inFlight judges the hold's canary, if one is in flight, and reports whether it still is; st
// follows the verdict.
func inFlight(st *DoubtHold, maxHold time.Duration, judge func(Canary) CanaryResult, now time.Time) bool {
	k := st.Canary
	if k == nil {
		return false
	}
	switch judge(*k) {
	case CanaryPending:
		return true
	case CanaryPassed:
		st.Canary, st.Released = nil, now
	case CanaryFailed:
		st.Canary, st.Since, st.Released = nil, now, time.Time{}
		st.Period = min(2*st.Period, maxHold)
	case CanaryLost:
		st.Canary = nil
	}
	return false
}

// pendingCanary is the step of a hold whose canary is in flight: held until its verdict.
func pendingCanary(st DoubtHold, now time.Time) DoubtStep {
	k := st.Canary
	msg := fmt.Sprintf("held since %s; container %s of pod %s was restarted as canary %d at %s, waiting for its probe until %s",
		stamp.Seconds(st.Onset), k.Container, k.PodName, st.Canaries, stamp.Seconds(k.At), stamp.Seconds(k.Deadline))
	if k.Evicted {
		msg = fmt.Sprintf("held since %s; pod %s was evicted as canary %d at %s, waiting for it to go until %s",
			stamp.Seconds(st.Onset), k.PodName, st.Canaries, stamp.Seconds(k.At), stamp.Seconds(k.Deadline))
	}
	return DoubtStep{Next: st, Due: max(0, k.Deadline.Sub(now)), Message: msg}
}

// ClaimCanary is BoundDoubt for an eviction: the evicted pod is the key's canary, so that one pod
// of the key is released at a time, whether restarted or evicted. It waits while another canary
// is in flight, not for the canary's turn: the pod's own restarts have already failed, and an
// eviction is the end of its hold rather than a guess the waits ration. A key without a doubt
// hold begins one (RestartIneffective), its first canary the eviction. The step releases the pod
// as the canary, or past a canary that passed within maxHold: the canary's pod is back, and
// whether its restart proves to help says nothing of this pod's (ProvenAt is not waited for;
// the eviction keeps its rate limit). A restart since the wait began that failed again soon ends
// that release, as in BoundDoubt, and the eviction is the next canary.
func ClaimCanary(st DoubtHold, seen bool, maxHold time.Duration, failed int32, ev CanaryEvidence, now time.Time) DoubtStep {
	if !seen || st.Reason.Kind() != policyv1alpha1.HoldKindDoubt {
		st = DoubtHold{Reason: policyv1alpha1.HoldRestartIneffective, Onset: now, Since: now, Period: FirstWait(maxHold, failed)}
	}
	st.Touched = now
	if inFlight(&st, maxHold, ev.Judge, now) {
		return pendingCanary(st, now)
	}
	if !st.Released.IsZero() {
		proven := st.Released.Add(ev.Soon)
		switch {
		case now.Sub(proven) >= maxHold:
			st.Released = time.Time{}
		case ev.NotHelped != nil && ev.NotHelped(st.Since):
			st.Since, st.Released = now, time.Time{}
			st.Period = min(2*st.Period, maxHold)
		default:
			return DoubtStep{Next: st, Release: true, ProvenAt: proven}
		}
	}
	return DoubtStep{Next: st, Release: true, Canary: true}
}

// boundDoubt bounds the doubt hold v: it reports whether the failure is released past it, or
// adds to v how the hold ends. Every doubt of a key (its storms, the node storm it is in, its
// restarts that did not help) shares the key's hold, judged once per decision: a pod released
// past one doubt rule is released past the later ones. Each key has its own canaries: another
// tenant's pods failing for good on the node never make this key's wait longer.
func boundDoubt(c *judged, v *Verdict) bool {
	if v.Reason == policyv1alpha1.HoldDaemonNotReporting {
		// No canary: no restart can run where no daemon reports, nor is the evidence there any.
		v.Message += "; held until the daemon reports again or the pod goes: no restart can run on its node"
		return false
	}
	if c.doubt == nil {
		maxHold, _ := c.f.Policies.MaxHold()
		st, seen := c.m.Hold(c.key)
		step := BoundDoubt(st, seen, v.Reason, maxHold, c.tally.Ineffective, c.evidence(), c.now)
		c.doubt, c.seen.Hold = &step, &step.Next
	}
	if !c.doubt.Release {
		v.Message += "; " + c.doubt.Message
		// Decided again when the canary is due, not only at the fallback recheck.
		if due := c.doubt.Due; due > 0 && (v.RequeueAfter == 0 || due < v.RequeueAfter) {
			v.RequeueAfter = due
		}
	}
	return c.doubt.Release
}

// claimCanary makes the eviction the key's canary (ClaimCanary), unless an earlier doubt rule of
// this decision has already released the pod; it reports whether the eviction may go.
func claimCanary(c *judged) bool {
	if c.doubt == nil {
		maxHold, _ := c.f.Policies.MaxHold()
		st, seen := c.m.Hold(c.key)
		step := ClaimCanary(st, seen, maxHold, c.tally.Ineffective, c.evidence(), c.now)
		c.doubt, c.seen.Hold = &step, &step.Next
	}
	return c.doubt.Release
}

// evidence is what the decision knows of the key's canary and of the restarts its hold released.
func (c *judged) evidence() CanaryEvidence {
	return CanaryEvidence{Judge: c.judgeCanary, NotHelped: c.notHelped,
		Soon: SoonAfterRestart(c.x.InitialDelay, c.x.Threshold, c.x.Period)}
}

// judgeCanary judges the key's canary by its pod as the workload's pods show it.
func (c *judged) judgeCanary(k Canary) CanaryResult {
	return JudgeCanary(k, c.workload.Pods, c.m.Restarts(c.key.Workload), c.seen.Ineffective, c.now)
}

// notHelped reports whether a restart of the key requested at or after since was found not to
// help, before or by this decision.
func (c *judged) notHelped(since time.Time) bool {
	for _, r := range c.m.Restarts(c.key.Workload) {
		if r.Container == c.key.Container && !r.At.Before(since) &&
			(r.Ineffective || slices.Contains(c.seen.Ineffective, r.RestartID)) {
			return true
		}
	}
	return false
}

// isDoubt reports whether v is a doubt hold.
func isDoubt(v Verdict) bool {
	return v.Outcome == Hold && v.Reason.Kind() == policyv1alpha1.HoldKindDoubt
}
