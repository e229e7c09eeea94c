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

package protection

import (
	"fmt"
	"time"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// Outcome is what the decision controller does with one Failed liveness result.
type Outcome string

const (
	// Ignore: the result is stale or not real; nothing happens and nothing is recorded.
	Ignore Outcome = "Ignore"
	// Wait: the pod already has an active restart; decide again when it finished.
	Wait Outcome = "Wait"
	// Hold: the restart is held for Reason; recorded as an event, a counter and in status.
	Hold Outcome = "Hold"
	// Restart: create the ContainerRecreateRequest.
	Restart Outcome = "Restart"
)

// Facts are what the controller gathered about one Failed result. The zero value of each
// boolean is the safe one where it matters (no lease = not reporting).
type Facts struct {
	// Step 1: the result is fresh and real.
	PodFound           bool
	PodTerminating     bool
	ResultContainerID  string
	RunningContainerID string // "" when the container is not running
	LeaseCurrent       bool
	// Evidence: when the result was taken and the probe's period (node clock), and the daemon's
	// current start and last heartbeat (its Lease's acquireTime and renewTime, node clock).
	ResultProbeTime time.Time
	ProbePeriod     int32
	// FailedFor is how long the result has been Failed (since its lastTransitionTime, on the
	// manager's clock).
	FailedFor     time.Duration
	DaemonStarted time.Time
	DaemonRenewed time.Time

	// Step 2: switches.
	PodRestartDisabled bool
	ManagerDisabled    bool

	Policies Governing
	Target   Target

	// Step 4.
	PodHasActiveCRR bool

	// Steps 5 and 6.
	Workload WorkloadState
	// PodAvailable is whether this pod counts as available in Workload.
	PodAvailable bool
	// Restarts tallies the workload's recent restarts, for the restart-effectiveness breaker.
	Restarts RestartTally
	Node     NodeState
	NodeRule NodeStormRule
	// WorkloadStormSettling and NodeStormSettling are how much longer a storm that has just
	// dropped within its limit keeps holding restarts (StormSettler); zero when none.
	WorkloadStormSettling time.Duration
	NodeStormSettling     time.Duration
}

// Decision is the outcome of Decide.
type Decision struct {
	Outcome Outcome
	Reason  Reason // set for Hold
	Message string
	// RequeueAfter is when deciding again could succeed (RateLimited); zero means "when something
	// changes" (a watch event), with the caller's fallback interval.
	RequeueAfter time.Duration
	// Tokens are the rate-limit tokens of a Restart; the caller cancels them when the restart is
	// not created after all.
	Tokens *Reservation
}

// Stale applies the first half of step 1 alone, from the pod and the result only: a result for a
// pod that is gone or terminating, or for a container that is no longer the running one, is
// ignored. Callers use it to skip gathering the other facts.
func Stale(f Facts) (Decision, bool) {
	if !f.PodFound || f.PodTerminating {
		return Decision{Outcome: Ignore, Message: "pod is gone or terminating"}, true
	}
	if f.RunningContainerID == "" || f.RunningContainerID != f.ResultContainerID {
		return Decision{Outcome: Ignore, Message: fmt.Sprintf(
			"stale result: reported for %q, running container is %q", f.ResultContainerID, f.RunningContainerID)}, true
	}
	return Decision{}, false
}

// StaleEvidence reports why a Failed result is no evidence for a restart: it was taken before the
// node's daemon started (an earlier instance left it in the status), or it is older than
// FailedStaleAfter its probe's period at the daemon's last heartbeat (the daemon stopped
// refreshing it). A result without a probe time, or a daemon without a start, is not judged.
func StaleEvidence(f Facts) (string, bool) {
	if f.ResultProbeTime.IsZero() {
		return "", false
	}
	if !f.DaemonStarted.IsZero() && f.ResultProbeTime.Before(f.DaemonStarted) {
		return fmt.Sprintf("the result was taken at %s, before the daemon of node %s started at %s",
			f.ResultProbeTime.UTC().Format(time.RFC3339), f.Node.Name, f.DaemonStarted.UTC().Format(time.RFC3339)), true
	}
	if limit := appsv1alpha1.FailedStaleAfter(f.ProbePeriod); !f.DaemonRenewed.IsZero() && f.DaemonRenewed.Sub(f.ResultProbeTime) > limit {
		return fmt.Sprintf("the result is %s old, more than %s for a probe period of %ds",
			f.DaemonRenewed.Sub(f.ResultProbeTime).Round(time.Second), limit, f.ProbePeriod), true
	}
	return "", false
}

// RevisionEvidenceWait bounds how long a failing pod of an unproven revision (RevisionUnproven)
// waits for its siblings' first results: three probe periods, at least 10 s, which covers the
// spread of container starts in a rollout on a busy node.
func RevisionEvidenceWait(periodSeconds int32) time.Duration {
	return max(10*time.Second, 3*periodOf(periodSeconds))
}

// periodOf is a probe's period, with the API's default of 10 s when unset.
func periodOf(periodSeconds int32) time.Duration {
	if periodSeconds <= 0 {
		periodSeconds = 10
	}
	return time.Duration(periodSeconds) * time.Second
}

// startingToFail says how many of the failing pods have not reached their failure threshold yet.
func startingToFail(n int32) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them starting to fail)", n)
}

func hold(r Reason, format string, args ...any) Decision {
	return Decision{Outcome: Hold, Reason: r, Message: fmt.Sprintf(format, args...)}
}

// Decide applies the rules of docs/policy.md ("The decision, in order") to one Failed liveness
// result, in that order. It takes tokens from the limiter only when every earlier rule allows
// the restart, so held decisions never use up the rate limit.
func Decide(f Facts, l *Limiter) Decision {
	// 1. Fresh and real.
	if d, stale := Stale(f); stale {
		return d
	}
	if !f.LeaseCurrent {
		return hold(ReasonDaemonNotReporting,
			"the daemon of node %s is not reporting (Lease missing or expired); its results cannot be trusted", f.Node.Name)
	}
	if why, stale := StaleEvidence(f); stale {
		return hold(ReasonDaemonNotReporting, "%s; waiting for a new probe of container %s", why, f.Target.Container)
	}

	// 2. Switches.
	if f.PodRestartDisabled {
		return hold(ReasonDisabled, "would restart container %s, but the pod has restart-disabled=true", f.Target.Container)
	}
	if f.ManagerDisabled {
		return hold(ReasonDisabled, "would restart container %s, but restarts are disabled manager-wide (--restarts=disabled)", f.Target.Container)
	}
	if p, ok := f.Policies.DryRun(); ok {
		return hold(ReasonDryRun, "would restart container %s; policy %s is in DryRun mode", f.Target.Container, p.Key)
	}

	// 3. Blacklist.
	if what, ok := f.Policies.Blacklisted(f.Target); ok {
		return hold(ReasonBlacklisted, "not restarting container %s: %s", f.Target.Container, what)
	}

	// 4. One restart per pod at a time.
	if f.PodHasActiveCRR {
		return Decision{Outcome: Wait, Message: "the pod already has an active restart"}
	}

	// 5. Failure storm in the workload, then across the node.
	maxFailing, by := f.Policies.MaxFailing(f.Workload.Desired)
	if f.Workload.Storm(maxFailing) {
		return hold(ReasonFailureStorm, "%d of %d pods of %s are failing%s, more than maxFailing %d (policy %s)",
			f.Workload.FailingPods()+f.Workload.SuspectPods(), f.Workload.Desired, f.Workload.Ref,
			startingToFail(f.Workload.SuspectPods()), maxFailing, by)
	}
	if bad, total, storm := f.Workload.RevisionStorm(func(n int32) int32 { m, _ := f.Policies.MaxFailing(n); return m }); storm {
		m, _ := f.Policies.MaxFailing(total)
		return hold(ReasonFailureStorm, "%d of the %d probed pods of %s, a revision of %s, are failing or starting to fail, more than maxFailing %d of them (policy %s)",
			bad, total, f.Workload.Revision, f.Workload.Ref, m, by)
	}
	if unjudged, unproven := f.Workload.RevisionUnproven(); unproven {
		if limit := RevisionEvidenceWait(f.ProbePeriod); f.FailedFor < limit {
			return Decision{Outcome: Wait, RequeueAfter: min(limit-f.FailedFor, periodOf(f.ProbePeriod)), Message: fmt.Sprintf(
				"no pod of %s, a revision of %s, has passed its probe yet and %d of its pods have not been probed: waiting up to %s for their first results",
				f.Workload.Revision, f.Workload.Ref, unjudged, limit)}
		}
	}
	if f.WorkloadStormSettling > 0 {
		d := hold(ReasonFailureStorm, "%d of %d pods of %s are failing, within maxFailing %d again; the storm must settle for %s more (policy %s)",
			f.Workload.FailingPods(), f.Workload.Desired, f.Workload.Ref, maxFailing, f.WorkloadStormSettling.Round(time.Second), by)
		d.RequeueAfter = f.WorkloadStormSettling
		return d
	}
	if f.NodeRule.Storm(f.Node) {
		return hold(ReasonNodeStorm, "%d of %d pods in %d workloads are failing on node %s, more than %s",
			f.Node.FailingPods, f.Node.Pods, f.Node.FailingWorkloads, f.Node.Name, f.NodeRule.MaxFailing.String())
	}
	if f.NodeStormSettling > 0 {
		d := hold(ReasonNodeStorm, "%d of %d pods are failing on node %s, within %s again; the storm must settle for %s more",
			f.Node.FailingPods, f.Node.Pods, f.Node.Name, f.NodeRule.MaxFailing.String(), f.NodeStormSettling.Round(time.Second))
		d.RequeueAfter = f.NodeStormSettling
		return d
	}

	// 5c. Restarting the workload is not helping.
	if b, by := f.Policies.RestartBreaker(); b.Tripped(f.Restarts) {
		return hold(ReasonRestartIneffective, "%d of the last %d restarts of %s in %s failed their probe again soon after the restart: restarting is not helping (policy %s)",
			f.Restarts.Ineffective, f.Restarts.Requested, f.Workload.Ref, b.Window, by)
	}
	// 6. maxUnavailable; an already unavailable pod may always be restarted.
	if f.PodAvailable {
		maxUnavail, by := f.Policies.MaxUnavailable(f.Workload.Desired)
		if u := f.Workload.Unavailable(); u >= maxUnavail {
			return hold(ReasonMaxUnavailable, "%d of %d pods of %s are unavailable, maxUnavailable is %d (policy %s)",
				u, f.Workload.Desired, f.Workload.Ref, maxUnavail, by)
		}
	}

	// 7. Rate limit.
	tokens, ok, wait := l.Take(f.Policies)
	if !ok {
		d := hold(ReasonRateLimited, "rate limit reached; next token in %s", wait.Round(time.Millisecond))
		d.RequeueAfter = wait
		return d
	}
	return Decision{Outcome: Restart, Tokens: tokens}
}
