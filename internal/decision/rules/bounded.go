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
)

// Doubt holds end. A storm, restarts that did not help or a daemon that is not reporting are
// reasons to doubt that a restart helps, not proof that it hurts: held for ever, a real hang
// among them would never be restarted, where native liveness would restart it. So after the
// policy's maxHold one held pod of the workload is restarted as a canary (still within the
// budget and the rate limit); if its new container passes its probe the others follow, and if it
// fails again the hold starts over with its period doubled, as CrashLoopBackOff doubles its delay.

// DefaultMaxHold is the maxHold of the default policy and of a policy that sets none.
const DefaultMaxHold = 10 * time.Minute

// MaxHoldCap bounds the doubled hold period, as a multiple of maxHold: with the default 10m a
// workload whose canaries keep failing gets one restart every 80 minutes at most.
const MaxHoldCap = 8

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

// DoubtHold is what the memory keeps of a workload whose restarts are held for a doubt.
type DoubtHold struct {
	// Since is when the current hold period began; Period how long it lasts.
	Since  time.Time
	Period time.Duration
	// Touched is when a decision last saw the hold; a hold no decision has seen for two periods
	// is over (its pods recovered or went away: held pods are decided again every recheck
	// interval), and the next doubt starts a new one.
	Touched time.Time
	// Canary is the restart released to test the doubt, while its outcome is not known.
	Canary *Canary
	// Released is when a canary passed: for one period the workload's held pods go on to the
	// budget and the rate limit.
	Released time.Time
}

// Canary is the restart released to test a doubt hold.
type Canary struct {
	Pod                 types.UID
	PodName             string
	Container, Instance string
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
	// CanaryPassed: the pod's probes pass after the restart.
	CanaryPassed
	// CanaryFailed: the new container failed its probe soon after the restart, or the deadline
	// passed without it passing.
	CanaryFailed
	// CanaryLost: the pod is gone; another held pod may be the canary.
	CanaryLost
)

// JudgeCanary judges a canary by what the effectiveness breaker sees of its restart (restarts,
// with found: the ones found ineffective now) and by its pod's probes.
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
	if p := pods[i]; p.Healthy && !p.ActiveCRR && !p.Recovering && !p.Terminating {
		return CanaryPassed
	}
	if now.After(k.Deadline) {
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
	// Message says, when it holds, how the hold ends.
	Message string
	// Due, when it holds, is how soon deciding again can change that: the canary is due, or its
	// deadline passes. Zero: only a change of the cause can.
	Due time.Duration
}

// BoundDoubt applies maxHold (zero: never) to a doubt hold of the workload. st is the hold the
// memory keeps (seen: it keeps one); judge tells what became of its canary.
func BoundDoubt(st DoubtHold, seen bool, maxHold time.Duration, judge func(Canary) CanaryResult, now time.Time) DoubtStep {
	if !seen || (st.Period > 0 && now.Sub(st.Touched) > 2*st.Period) {
		st = DoubtHold{Since: now, Period: maxHold}
	}
	st.Touched = now
	if maxHold <= 0 {
		return DoubtStep{Next: st, Message: fmt.Sprintf("held since %s; maxHold is 0s, so only the cause ending ends the hold", stamp(st.Since))}
	}
	// maxHold may have changed since the hold began.
	st.Period = min(max(st.Period, maxHold), MaxHoldCap*maxHold)
	if k := st.Canary; k != nil {
		switch judge(*k) {
		case CanaryPending:
			return DoubtStep{Next: st, Due: max(0, k.Deadline.Sub(now)), Message: fmt.Sprintf("held since %s; container %s of pod %s was restarted as a canary at %s, waiting for its probe until %s",
				stamp(st.Since), k.Container, k.PodName, stamp(k.At), stamp(k.Deadline))}
		case CanaryPassed:
			st.Canary, st.Released = nil, now
		case CanaryFailed:
			st.Canary, st.Since, st.Released = nil, now, time.Time{}
			st.Period = min(2*st.Period, MaxHoldCap*maxHold)
		case CanaryLost:
			st.Canary = nil
		}
	}
	if !st.Released.IsZero() {
		if now.Sub(st.Released) < st.Period {
			return DoubtStep{Next: st, Release: true}
		}
		// The canary passed a period ago and the doubt is back: a new hold.
		st = DoubtHold{Since: now, Period: maxHold, Touched: now}
	}
	if left := st.Since.Add(st.Period).Sub(now); left > 0 {
		return DoubtStep{Next: st, Due: left, Message: fmt.Sprintf("held since %s; one held pod is restarted as a canary in %s (maxHold %s)",
			stamp(st.Since), left.Round(time.Second), st.Period)}
	}
	return DoubtStep{Next: st, Release: true, Canary: true}
}

// boundDoubt bounds the doubt hold v: it reports whether the failure is released past it, or
// adds to v how the hold ends. The hold is judged once per decision: a pod released past one
// doubt rule is released past the later ones.
func boundDoubt(c *judged, v *Verdict) bool {
	if c.doubt == nil {
		maxHold, _ := c.f.Policies.MaxHold()
		st, seen := c.m.Doubt(c.workloadKey)
		restarts := c.m.Restarts(c.workloadKey)
		judge := func(k Canary) CanaryResult {
			return JudgeCanary(k, c.workload.Pods, restarts, c.seen.Ineffective, c.now)
		}
		step := BoundDoubt(st, seen, maxHold, judge, c.now)
		c.doubt = &step
		c.seen.Doubt = &step.Next
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

// isDoubt reports whether v is a doubt hold.
func isDoubt(v Verdict) bool {
	return v.Outcome == Hold && v.Reason.Kind() == policyv1alpha1.HoldKindDoubt
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
