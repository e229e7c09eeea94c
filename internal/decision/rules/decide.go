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
	"time"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Outcome is what the decision controller does with one Failed liveness result.
type Outcome string

const (
	// Ignore: the result is stale or not real; nothing happens and nothing is recorded.
	Ignore Outcome = "Ignore"
	// Wait: decide again later (the pod already has an active restart, or a new revision's first
	// results are awaited); no event, no count.
	Wait Outcome = "Wait"
	// Hold: the restart is held for Reason; recorded as an event, a counter and in status.
	Hold Outcome = "Hold"
	// Restart: create the ContainerRecreateRequest.
	Restart Outcome = "Restart"
	// Evict: evict the pod through the Eviction API instead (evict.go).
	Evict Outcome = "Evict"

	// Requested and Withdrawn are what came of a Restart: its request was created, or it was not
	// (refused, already there, or the held failure not confirmed). Decide never returns them;
	// the decision controller tells the memory with them.
	Requested Outcome = "Requested"
	Withdrawn Outcome = "Withdrawn"
	// Evicted, EvictionRefused and EvictionWithdrawn are what came of an Evict: the API server
	// accepted the eviction, or refused it (Message says why), or it was not tried (the failure not
	// confirmed, the pod gone, the API server not reached).
	Evicted           Outcome = "Evicted"
	EvictionRefused   Outcome = "EvictionRefused"
	EvictionWithdrawn Outcome = "EvictionWithdrawn"
)

// Verdict is what one rule answers.
type Verdict struct {
	Outcome Outcome
	Reason  policyv1alpha1.HoldReason // set for Hold
	Message string
	// RequeueAfter is when deciding again could succeed; zero means "when something changes" (a
	// watch event), with the caller's fallback interval.
	RequeueAfter time.Duration
}

// Decision is the verdict on one failure with all that acting on it and remembering it need:
// the decision controller and the memory read it, they never ask the rules again.
type Decision struct {
	Verdict
	Pod     types.NamespacedName
	UID     types.UID
	Node    string
	Failure Failure
	// The rest is set past Stale.

	// Workload and Policies are the pod's workload and its governing policies (their buckets);
	// StatusPolicies those with a status that counts the decision (not the default policy).
	// Key is the workload's container the failure is of (its holds, storms and canaries);
	// WorkloadRef the workload as its hold's record names and is owned by it.
	Workload       WorkloadKey
	Key            HoldKey
	WorkloadRef    WorkloadRef
	Policies       Governing
	StatusPolicies []PolicyKey
	// Held is the reason the instance's restart was held for before this decision, "" if none.
	// NewHold: the decision holds an instance that was not held, or held for another reason;
	// such a hold is an event and is counted, the same hold decided again is not.
	Held    policyv1alpha1.HoldReason
	NewHold bool
	// HeldSince is when the instance's restart began to be held for Reason (a Hold). Announce:
	// the hold is told in an event, when it starts and every HoldEventInterval while it lasts.
	HeldSince time.Time
	Announce  bool
	// Canary: the restart, or the eviction, is the canary of the key's doubt hold (bounded.go);
	// the memory remembers it as such.
	Canary bool
	// Proven: the restart is released by a canary whose restart has proven to help; no empty
	// token bucket held it (ratelimit.go). The memory takes the tokens the buckets hold.
	Proven bool
	// Soon is how soon after the restart a failure of the new instance means that the restart
	// did not help (SoonAfterRestart).
	Soon time.Duration
	// Seen is what the decision saw that the memory keeps for the next ones.
	Seen Seen
	// What the budget saw, for the decision log.
	Desired, Unavailable int32
	PodAvailable         bool
}

// Seen is what a decision saw that the memory keeps, whichever rule answered.
type Seen struct {
	// At is the time of the decision.
	At time.Time
	// WorkloadStorm and NodeStorm move the settle timers of the workload and the node.
	WorkloadStorm, NodeStorm StormMark
	// WorkloadStormOnset is the decided pod's onset, kept with the workload's settle timer when
	// it saw the storm (Memory.StormOnset).
	WorkloadStormOnset time.Time
	// Ineffective are the remembered restarts found not to have helped.
	Ineffective []RestartID
	// Finished are the expected requests the cache shows finished.
	Finished []ExpectedRequest
	// Hold is the key's hold from now, when a rule looked at it: a doubt hold, or a budget hold
	// behind pods the operator never restarts (budget.go). The memory ends a hold once none of
	// its pods is held any more.
	Hold *DoubtHold
}

// ExpectedRequest is a request the decision created for a pod.
type ExpectedRequest struct {
	Pod  types.UID
	Name string
}

// Memory is what the rules read of the decision's memory. It is read under the memory's lock:
// nothing changes it while one decision is made.
type Memory interface {
	// Now is the time of the decision, on the manager's clock.
	Now() time.Time
	// Expected returns the request created for the pod that is not known to be finished.
	Expected(pod types.UID) (request string, ok bool)
	// Held returns the instance's held restart.
	Held(pod types.NamespacedName, i Instance) (HeldRecord, bool)
	// LastStorm and LastNodeStorm return when the key (a container of a workload) or the node
	// was last seen in a storm.
	LastStorm(k HoldKey) (time.Time, bool)
	LastNodeStorm(node string) (time.Time, bool)
	// StormOnset returns the onset of the pod whose decision last saw the key's storm (zero:
	// unknown).
	StormOnset(k HoldKey) time.Time
	// Restarts are the workload's remembered restarts, oldest first. The slice is only read.
	Restarts(w WorkloadKey) []RestartRecord
	// TokenWait is how long until the manager-wide bucket, as shared with namespace ns, and each
	// governing policy's hold a token; zero when they do now.
	TokenWait(ns string, g Governing) time.Duration
	// Hold returns the key's hold (a doubt hold, or a budget hold behind pods the operator never
	// restarts).
	Hold(k HoldKey) (DoubtHold, bool)
	// FirstSeen returns when a decision first saw the instance's failure.
	FirstSeen(pod types.NamespacedName, i Instance) (time.Time, bool)
	// Eviction returns the pod's last eviction attempt.
	Eviction(pod types.UID) (EvictionRecord, bool)
}

// HeldRecord is what the memory keeps of a held restart.
type HeldRecord struct {
	Reason policyv1alpha1.HoldReason
	// Since is when it began to be held for Reason; Announced when the last event told it; both
	// on the manager's clock.
	Since, Announced time.Time
}

// HoldEventInterval is how often a lasting hold is told again in an event on its pod: a hold
// nobody hears of is a liveness kill silently removed.
const HoldEventInterval = 5 * time.Minute

// inOrder are the rules after Stale, in the order of the decision; the first that answers
// decides, and a failure no rule holds is restarted.
var inOrder = []func(*judged) (Verdict, bool){
	daemonReporting, freshEvidence, // 1. fresh and real
	switches,    // 2.
	blacklisted, // 3.
	oneAtATime,  // 4.
	storms,      // 5. workload and revision storms, and their settling
	nodeStorms,  // 5b. node storms, and their settling
	ineffective, // 5c. restarts that do not help
	budget,      // 6. maxUnavailable
	rateLimited, // 7.
}

// Decide judges one failure of the pod. It reads the memory and changes nothing: the memory
// applies the decision (memory.Memory.Decide).
func Decide(f *Facts, x Failure, m Memory) Decision {
	d := Decision{Pod: f.Pod, UID: f.UID, Node: f.Node.Name, Failure: x}
	if v, stale := Stale(f, x); stale {
		d.Verdict = v
		return d
	}
	c := judge(f, x, m)
	d.Workload, d.Key, d.WorkloadRef = c.key.Workload, c.key, f.Workload.Ref
	d.Policies, d.StatusPolicies = f.Policies, f.Policies.WithStatus()
	held, _ := m.Held(f.Pod, x.Instance())
	d.Held = held.Reason
	d.Soon = SoonAfterRestart(x.InitialDelay, x.Threshold, x.Period)
	d.Desired, d.Unavailable, d.PodAvailable = c.workload.Desired, c.workload.Unavailable(), c.self.Available()
	d.Verdict = Verdict{Outcome: Restart}
	for _, rule := range inOrder {
		v, ok := rule(c)
		if !ok || isDoubt(v) && boundDoubt(c, &v) {
			continue
		}
		d.Verdict = v
		break
	}
	if d.Outcome == Restart && c.evict {
		evictInstead(c, &d.Verdict)
	}
	d.Seen = c.seen
	d.Canary = (d.Outcome == Restart || d.Outcome == Evict) && c.doubt != nil && c.doubt.Canary
	d.Proven = d.Outcome == Restart && c.proven
	d.NewHold = d.Outcome == Hold && d.Held != d.Reason
	if d.Outcome == Hold {
		d.HeldSince, d.Announce = held.Since, c.now.Sub(held.Announced) >= HoldEventInterval
		if d.NewHold {
			d.HeldSince, d.Announce = c.now, true
		}
	}
	return d
}

// judged is one failure under judgement: the facts, the memory, and what follows from both
// before any rule answers. What it sees is kept whichever rule answers.
type judged struct {
	f   *Facts
	x   Failure
	m   Memory
	now time.Time
	// key is the workload's container the failure is of.
	key HoldKey
	// The workload and the pod as the failed container's evidence shows them (PodState.For),
	// with the requests the memory expects counted as active.
	workload WorkloadState
	self     PodState
	// failedFor is how long the decision has seen the result Failed, on the manager's clock (the
	// result's own times are the node's, whose clock may be off).
	failedFor time.Duration
	// The storm limit of the workload and how much longer its storm, and the node's, settle.
	maxFailing                     int32
	maxFailingBy                   PolicyKey
	workloadSettling, nodeSettling time.Duration
	// tally counts the workload's recent restarts, podTally the pod's own, for the
	// restart-effectiveness breaker.
	tally, podTally RestartTally
	// ineffectivePods counts the workload's pods whose restarts did not help.
	ineffectivePods int
	// doubt is the key's doubt hold, once a doubt rule has answered.
	doubt *DoubtStep
	// evict: the pod is evicted instead of restarted if the later rules allow it, under breaker.
	evict   bool
	breaker RestartBreaker
	seen    Seen

	// proven: the rate limit let the restart through as released by a canary that helped.
	proven bool
}

func judge(f *Facts, x Failure, m Memory) *judged {
	c := &judged{f: f, x: x, m: m, now: m.Now(),
		key: HoldKey{Workload: f.Workload.Ref.Key(f.Pod.Namespace), Container: x.Container}}
	c.seen.At = c.now
	if first, ok := m.FirstSeen(f.Pod, x.Instance()); ok {
		c.failedFor = max(0, c.now.Sub(first))
	}
	expectRequests(c) // active.go
	observeStorms(c)  // storms.go
	judgeRestarts(c)  // effectiveness.go
	return c
}

func hold(r policyv1alpha1.HoldReason, format string, args ...any) Verdict {
	return Verdict{Outcome: Hold, Reason: r, Message: fmt.Sprintf(format, args...)}
}
