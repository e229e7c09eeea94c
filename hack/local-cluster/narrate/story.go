package main

import (
	"time"
)

// The demo's policy and Deployment (hack/local-cluster/demo/shop.yaml) as the story assumes them;
// the narrator checks them before the first step, so that editing the manifest cannot quietly
// change what the expectations below mean.
const (
	replicas       = 6
	maxUnavailable = 1 // policy shop: at most one checkout pod down at a time
	maxFailing     = 3 // policy shop: 50% of 6; more failing pods than this is a storm
)

// action is what a step does to the app: it makes some pods sick (by their index in the
// name-sorted list of the 6 pods) or heals them all.
type action int

const (
	stuckProcess   action = iota // POST /admin/sick: the process is stuck, a restart cures it
	dependencyDown               // POST /admin/dependency-down: the file is on an emptyDir, a restart does not cure it
	dependencyUp                 // POST /admin/dependency-up and /admin/healthy on every pod
)

// step is one part of the story: what is done, what should come of it, and how long to watch.
type step struct {
	num   int
	title string // what happens and what the operator should do, printed as the step's banner
	act   action
	pods  []int // indexes of the pods the action applies to (dependencyUp: all pods)
	// The step is watched at least minFor, then until settled says enough has happened to judge
	// (at most maxFor), then quiet longer, to see what else happens, before it is judged.
	minFor, maxFor, quiet time.Duration
	settled               func(Facts) bool
	expect                Expect
}

// shadowStory is played while the policy is in Shadow mode: the kubelet keeps its probes and
// restarts, the engine only says what it would have done (the policy's status.figures).
var shadowStory = []step{
	{
		num: 5,
		title: "in Shadow mode, a shared dependency fails on 5 of 6 pods and stays down across restarts: the kubelet " +
			"restarts them over and over; the operator restarts nothing and counts what it would have held",
		act: dependencyDown, pods: []int{1, 2, 3, 4, 5},
		minFor: 40 * time.Second, maxFor: 120 * time.Second, quiet: 5 * time.Second,
		// the kubelet restarted every sick pod, and the engine has a verdict on some of them
		settled: func(f Facts) bool {
			return len(filter(f.Sick, func(p string) bool { return f.Restarts[p] == 0 })) == 0 && f.WouldHold > 0
		},
		expect: Expect{MinRestarts: 5, MaxRestarts: -1, EverySickRestarted: true,
			OnlySickRestarted: true, MaxUnavailable: -1, NoRequests: true, WouldHold: true},
	},
	{
		num:    6,
		title:  "the dependency recovers: the probes pass again, and the kubelet stops restarting",
		act:    dependencyUp,
		minFor: 15 * time.Second, maxFor: 150 * time.Second, quiet: 8 * time.Second,
		settled: func(f Facts) bool {
			return len(f.NotPassingNow) == 0 && !f.StormNow && !f.IneffectiveNow
		},
		expect: Expect{MinRestarts: 0, MaxRestarts: -1, MaxUnavailable: -1, NoRequests: true, ClearAtEnd: true},
	},
}

// story is played once the policy is in Enforce mode and the pods were re-created under it.
var story = []step{
	{
		num:   8,
		title: "a stuck process on 2 pods: both are restarted, one at a time (maxUnavailable 1)",
		act:   stuckProcess, pods: []int{0, 1},
		minFor: 10 * time.Second, maxFor: 120 * time.Second, quiet: 8 * time.Second,
		// both restarted, back and passing their probe
		settled: func(f Facts) bool {
			return len(filter(f.Sick, func(p string) bool { return f.Restarts[p] == 0 })) == 0 &&
				f.UnavailableNow == 0 && len(f.NotPassingNow) == 0
		},
		expect: Expect{MinRestarts: 2, MaxRestarts: 2, EverySickRestarted: true, OnlySickRestarted: true,
			MaxUnavailable: maxUnavailable, Storm: NotSeen},
	},
	{
		num: 9,
		title: "a shared dependency fails on 5 of 6 pods and stays down across restarts: restarting cannot help, " +
			"so at most maxUnavailable (1) is restarted and the storm breaker holds the rest; 30 s after the onset " +
			"one held pod is restarted as a canary, fails again, and the next canary waits twice as long",
		act: dependencyDown, pods: []int{1, 2, 3, 4, 5},
		// long enough to see the canary, 30 s after the storm's onset; the next one is a minute later
		minFor: 45 * time.Second, maxFor: 120 * time.Second, quiet: 10 * time.Second,
		// every sick pod has been decided: restarted or held
		settled: func(f Facts) bool {
			return len(filter(f.Sick, func(p string) bool { return f.Restarts[p] == 0 && len(f.Holds[p]) == 0 })) == 0
		},
		expect: Expect{MinRestarts: 0, MaxRestarts: maxUnavailable + 1, OnlySickRestarted: true,
			MaxUnavailable: maxUnavailable, HeldBy: []string{"FailureStorm", "RestartIneffective"}, Storm: Seen},
	},
	{
		num:   10,
		title: "the dependency recovers: the probes pass again, the hold clears and nothing more is restarted",
		act:   dependencyUp,
		// the storm settles for --storm-settle-period (30 s) before the condition turns False
		minFor: 15 * time.Second, maxFor: 150 * time.Second, quiet: 8 * time.Second,
		settled: func(f Facts) bool {
			return len(f.NotPassingNow) == 0 && !f.StormNow && !f.IneffectiveNow
		},
		expect: Expect{MinRestarts: 0, MaxRestarts: 0, MaxUnavailable: -1, ClearAtEnd: true},
	},
}
