package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Facts is what happened during one step of the demo, as recorded from the cluster: restart
// counts, restart requests, RestartHeld events, the sampled unavailability and the policy's
// status. Nothing in it comes from the story; Judge compares it with the story's Expect.
type Facts struct {
	// Sick are the pods the step made sick.
	Sick []string
	// Restarts is, per pod, how much its containers' restartCount grew during the step.
	Restarts map[string]int
	// Requests is, per pod, the ContainerRecreateRequests first seen during the step.
	Requests map[string]int
	// Holds is, per pod, the hold reasons of the RestartHeld events recorded during the step
	// (new events, or a series count that went up).
	Holds map[string]map[string]bool
	// PolicyHeld is how much the policy's status.heldByReason grew during the step, per reason;
	// PolicyRequested how much status.restartsRequested grew.
	PolicyHeld      map[string]int64
	PolicyRequested int64
	// MaxUnavailable is the most pods seen unavailable at once (desired replicas - pods Ready and
	// without an unfinished restart request), over Samples samples.
	MaxUnavailable int
	Samples        int
	// StormSeen: the policy's StormDetected condition was True at some sample of the step;
	// IneffectiveSeen the same for RestartsIneffective (never seen when the API has no such condition).
	StormSeen       bool
	IneffectiveSeen bool
	// The state at the end of the step.
	StormNow       bool
	IneffectiveNow bool
	UnavailableNow int
	// NotPassingNow are the pods with a liveness state other than Succeeded in the NodePodProbe.
	NotPassingNow []string
	// Replaced are pods that disappeared or appeared during the step (the story assumes the same 6).
	Replaced []string
	// WouldHold and WouldRestart are how much the policy's figures of the Deployment's Shadow
	// pods grew during the step: the kubelet's restarts the engine would have held (avoided), by
	// reason in WouldHoldBy, and those it would have made too (agreed).
	WouldHold, WouldRestart int
	WouldHoldBy             map[string]int
}

// Tri is an expectation about a condition during a step.
type Tri int

const (
	Either  Tri = iota // not part of the story
	Seen               // must be True at some point of the step
	NotSeen            // must never be True during the step
)

// Expect is what the story says a step leads to.
type Expect struct {
	// Restarts bounds the containers restarted during the step, all pods together (max < 0: no bound).
	MinRestarts, MaxRestarts int
	// EverySickRestarted: each pod made sick is restarted at least once.
	EverySickRestarted bool
	// OnlySickRestarted: no pod that the step left healthy is restarted.
	OnlySickRestarted bool
	// MaxUnavailable: never more pods unavailable at once (< 0: not checked).
	MaxUnavailable int
	// HeldBy: every sick pod that was not restarted had a restart held for one of these reasons.
	HeldBy []string
	// Storm: the policy's StormDetected condition.
	Storm Tri
	// ClearAtEnd: at the end every probe passes, no storm and no RestartsIneffective condition.
	ClearAtEnd bool
	// NoRequests: the operator makes no restart request (Shadow mode).
	NoRequests bool
	// WouldHold: the figures say the engine would have held some of the kubelet's restarts, and
	// count no more restarts than the kubelet made (Shadow mode).
	WouldHold bool
}

// Verdict is the outcome of one step.
type Verdict struct {
	OK bool
	// Facts are what the verdict was made from.
	Facts Facts
	// Summary says what happened, from the facts alone.
	Summary string
	// Problems says, for each part of the story that did not happen, what was expected and seen.
	Problems []string
}

// Judge compares what happened with what the story says.
func Judge(e Expect, f Facts) Verdict {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	total := sum(f.Restarts)
	if total < e.MinRestarts || (e.MaxRestarts >= 0 && total > e.MaxRestarts) {
		bad("expected %s restarted, saw %d%s", restartRange(e.MinRestarts, e.MaxRestarts), total, podCounts(f.Restarts))
	}
	sick := map[string]bool{}
	for _, p := range f.Sick {
		sick[p] = true
	}
	if e.EverySickRestarted {
		if missing := filter(f.Sick, func(p string) bool { return f.Restarts[p] == 0 }); len(missing) > 0 {
			bad("expected every sick pod restarted, not restarted: %s", strings.Join(missing, ", "))
		}
	}
	if e.OnlySickRestarted {
		if healthy := filter(sortedKeys(f.Restarts), func(p string) bool { return !sick[p] && f.Restarts[p] > 0 }); len(healthy) > 0 {
			bad("expected only the sick pods restarted, also restarted: %s", strings.Join(healthy, ", "))
		}
	}
	if e.MaxUnavailable >= 0 {
		if f.Samples == 0 {
			bad("no sample of the pods' availability was taken")
		} else if f.MaxUnavailable > e.MaxUnavailable {
			bad("expected at most %s unavailable at once, saw %d", plural(e.MaxUnavailable, "pod"), f.MaxUnavailable)
		}
	}
	if len(e.HeldBy) > 0 {
		unheld := filter(f.Sick, func(p string) bool { return f.Restarts[p] == 0 && !heldFor(f.Holds[p], e.HeldBy) })
		if len(unheld) > 0 {
			bad("expected the sick pods that were not restarted to be held (%s), not held: %s",
				strings.Join(e.HeldBy, " or "), strings.Join(unheld, ", "))
		}
	}
	switch {
	case e.Storm == Seen && !f.StormSeen:
		bad("expected the policy to report a storm (StormDetected True), it never did")
	case e.Storm == NotSeen && f.StormSeen:
		bad("expected no storm, the policy reported one (StormDetected True)")
	}
	if e.ClearAtEnd {
		if len(f.NotPassingNow) > 0 {
			bad("expected every probe passing at the end, not passing: %s", strings.Join(f.NotPassingNow, ", "))
		}
		if f.StormNow {
			bad("expected the storm over at the end, StormDetected is still True")
		}
		if f.IneffectiveNow {
			bad("expected the hold cleared at the end, RestartsIneffective is still True")
		}
	}
	if n := sum(f.Requests); e.NoRequests && n > 0 {
		bad("expected no restart request in Shadow mode, saw %d%s", n, podCounts(f.Requests))
	}
	if e.WouldHold {
		if f.WouldHold == 0 {
			bad("expected the policy's figures to count restarts the engine would have held, they count none")
		}
		if f.WouldHold+f.WouldRestart > total {
			bad("the figures count %d of the kubelet's restarts, more than the %d it made", f.WouldHold+f.WouldRestart, total)
		}
	}
	if len(f.Replaced) > 0 {
		bad("pods were replaced during the step (%s): the story is about the same pods", strings.Join(f.Replaced, ", "))
	}
	return Verdict{OK: len(problems) == 0, Facts: f, Summary: Summarize(f), Problems: problems}
}

// Summarize says what happened in a step, e.g. "0 containers restarted; restarts held on 5
// pods: FailureStorm on 5; storm detected".
func Summarize(f Facts) string {
	parts := []string{plural(sum(f.Restarts), "container") + " restarted" + podCounts(f.Restarts)}
	if n := sum(f.Requests); n != sum(f.Restarts) || f.PolicyRequested != int64(n) {
		parts = append(parts, fmt.Sprintf("%s (policy counted %d)", plural(n, "restart request"), f.PolicyRequested))
	}
	byReason := map[string]int{}
	heldPods := 0
	for _, reasons := range f.Holds {
		if len(reasons) > 0 {
			heldPods++
		}
		for r := range reasons {
			byReason[r]++
		}
	}
	if heldPods > 0 {
		rs := make([]string, 0, len(byReason))
		for _, r := range sortedKeys(byReason) {
			rs = append(rs, fmt.Sprintf("%s on %d", r, byReason[r]))
		}
		parts = append(parts, fmt.Sprintf("restarts held on %s: %s", plural(heldPods, "pod"), strings.Join(rs, ", ")))
	}
	if held := sum(f.PolicyHeld); held > 0 {
		var rs []string
		for _, r := range sortedKeys(f.PolicyHeld) {
			if f.PolicyHeld[r] != 0 {
				rs = append(rs, fmt.Sprintf("%s %d", r, f.PolicyHeld[r]))
			}
		}
		parts = append(parts, fmt.Sprintf("policy counted %s: %s", plural(int(held), "hold"), strings.Join(rs, ", ")))
	}
	if f.Samples > 0 {
		parts = append(parts, fmt.Sprintf("at most %d unavailable at once", f.MaxUnavailable))
	}
	switch {
	case f.StormSeen && f.StormNow:
		parts = append(parts, "storm detected")
	case f.StormSeen:
		parts = append(parts, "storm detected, then over")
	default:
		parts = append(parts, "no storm")
	}
	if f.IneffectiveSeen {
		parts = append(parts, "restarts reported ineffective")
	}
	if f.WouldHold > 0 || f.WouldRestart > 0 {
		parts = append(parts, fmt.Sprintf("the engine would have held %d of the kubelet's restarts (%s) and made %d",
			f.WouldHold, countsByReason(f.WouldHoldBy), f.WouldRestart))
	}
	return strings.Join(parts, "; ")
}

// countsByReason lists counts by reason, sorted: "FailureStorm 3, MaxUnavailable 1".
func countsByReason(by map[string]int) string {
	rs := make([]string, 0, len(by))
	for _, r := range sortedKeys(by) {
		rs = append(rs, fmt.Sprintf("%s %d", r, by[r]))
	}
	return strings.Join(rs, ", ")
}

func heldFor(reasons map[string]bool, want []string) bool {
	for _, r := range want {
		if reasons[r] {
			return true
		}
	}
	return false
}

func restartRange(lo, hi int) string {
	switch {
	case hi < 0:
		return "at least " + plural(lo, "container")
	case lo == hi:
		return "exactly " + plural(lo, "container")
	case lo == 0:
		return "at most " + plural(hi, "container")
	}
	return fmt.Sprintf("%d to %d containers", lo, hi)
}

// plural: "1 pod", "0 pods", "2 pods".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// podCounts lists the pods with a non-zero count: " (checkout-a ×1, checkout-b ×2)".
func podCounts(m map[string]int) string {
	var s []string
	for _, p := range sortedKeys(m) {
		if m[p] > 0 {
			s = append(s, fmt.Sprintf("%s ×%d", p, m[p]))
		}
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, ", ") + ")"
}

func sum[V int | int64](m map[string]V) V {
	var n V
	for _, v := range m {
		n += v
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func filter(xs []string, keep func(string) bool) []string {
	var out []string
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}
