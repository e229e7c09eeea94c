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

// Step 5c: restarts that do not help. A restart cures a stuck process, not a dependency that is
// down or a wrong probe: when most of a workload's recent restarts were followed by the new
// container failing its probe again soon, further restarts of the workload are held. Each pod is
// judged first: a lemon pod whose own restarts do not help is held alone, and only restarts that
// did not help in at least two pods hold the workload's other pods, whose first hang may be
// genuine.

func ineffective(c *judged) (Verdict, bool) {
	b, by := c.f.Policies.RestartBreaker()
	if b.Tripped(c.podTally) {
		evict, why := evictable(c, b)
		if evict && claimCanary(c) {
			// The budget and the rate limit still decide (evictInstead).
			c.evict, c.breaker = true, b
			return Verdict{}, false
		}
		if evict {
			// Another pod of the key is the canary in flight: the hold's doubt step says which.
			why = "; its eviction waits for the canary in flight"
		}
		return hold(policyv1alpha1.HoldRestartIneffective,
			"%d of the last %d restarts of pod %s in %s failed their probe again soon after the restart: restarting it is not helping (policy %s)%s",
			c.podTally.Ineffective, c.podTally.Requested, c.f.Pod.Name, b.Window, by, why), true
	}
	if !b.Tripped(c.tally) || c.ineffectivePods < 2 {
		return Verdict{}, false
	}
	return hold(policyv1alpha1.HoldRestartIneffective,
		"%d of the last %d restarts of %s in %s failed their probe again soon after the restart: restarting is not helping (policy %s)",
		c.tally.Ineffective, c.tally.Requested, c.workload.Ref, b.Window, by), true
}

// judgeRestarts looks, before any rule answers, at the failed results of the containers the
// workload's pods run now: all the workload's pods, not only the one decided, so that restarts
// that do not help are seen together before another one is made. Every restart is judged, and
// the breaker counts those of the failed container (the key): a sidecar whose restarts do not
// help never holds the app container's.
func judgeRestarts(c *judged) {
	all := c.m.Restarts(c.key.Workload)
	c.seen.Ineffective = Ineffective(all, c.f.Refailures)
	restarts := OfContainer(all, c.key.Container)
	b, _ := c.f.Policies.RestartBreaker()
	var pods []types.UID
	c.tally, pods = tally(restarts, c.seen.Ineffective, b.Window, c.now)
	c.ineffectivePods = len(pods)
	var own []RestartRecord
	for _, r := range restarts {
		if r.Pod == c.f.UID {
			own = append(own, r)
		}
	}
	c.podTally = Tally(own, c.seen.Ineffective, b.Window, c.now)
}

// OfContainer returns the restarts of one container (in order); the slice is a new one.
func OfContainer(restarts []RestartRecord, container string) []RestartRecord {
	var out []RestartRecord
	for _, r := range restarts {
		if r.Container == container {
			out = append(out, r)
		}
	}
	return out
}

// RestartRecord is a restart the decision requested, as the memory keeps it for the breaker.
type RestartRecord struct {
	RestartID
	// Soon: a failure of the new instance within this of its start means the restart did not help.
	Soon time.Duration
	// InstanceFailed is when the stopped instance's probe turned Failed, on its node's clock: its
	// successor started later. (At is the manager's clock, never compared with a node's.)
	InstanceFailed time.Time
	Ineffective    bool
}

// RestartID names a restart: of a pod's container, stopping Instance, requested At.
type RestartID struct {
	Pod       types.UID
	Container string
	Instance  string
	At        time.Time
}

// Ineffective judges failed results against the restarts that started their containers: a new
// instance that reached a Failed state soon after its start means the latest restart of its
// container did not help. It returns the restarts found so now, each once: one found before (or
// earlier in refailures) is not found again.
func Ineffective(restarts []RestartRecord, refailures []Refailure) []RestartID {
	var found []RestartID
	for _, rf := range refailures {
		for i := len(restarts) - 1; i >= 0; i-- {
			r := &restarts[i]
			if r.Pod != rf.Pod || r.Container != rf.Container {
				continue
			}
			// The latest restart of this container; the new instance must be a later one: started
			// no earlier than the stopped one turned Failed, both on the node's clock (pod status
			// times have second precision).
			if !r.Ineffective && !slices.Contains(found, r.RestartID) && r.Instance != rf.ContainerID &&
				!rf.Started.Before(r.InstanceFailed.Truncate(time.Second)) && rf.FailedAt.Sub(rf.Started) <= r.Soon {
				found = append(found, r.RestartID)
			}
			break
		}
	}
	return found
}

// Tally counts the restarts requested within window before now, and those that did not help,
// the ones found now included.
func Tally(restarts []RestartRecord, found []RestartID, window time.Duration, now time.Time) RestartTally {
	t, _ := tally(restarts, found, window, now)
	return t
}

// tally is Tally, and the pods whose restarts did not help.
func tally(restarts []RestartRecord, found []RestartID, window time.Duration, now time.Time) (RestartTally, []types.UID) {
	var t RestartTally
	var pods []types.UID
	for i := range restarts {
		r := &restarts[i]
		if now.Sub(r.At) > window {
			continue
		}
		t.Requested++
		if r.Ineffective || slices.Contains(found, r.RestartID) {
			t.Ineffective++
			if !slices.Contains(pods, r.Pod) {
				pods = append(pods, r.Pod)
			}
		}
	}
	return t, pods
}

// RestartBreaker is a policy's breaker for restarts that do not help (spec.restartEffectiveness).
type RestartBreaker struct {
	Enabled        bool
	MinIneffective int32
	Window         time.Duration
	// Evict: a pod held for it is evicted instead when its container passes on another node.
	Evict bool
}

// DefaultRestartBreaker is the breaker of the default policy and of a policy that sets none.
var DefaultRestartBreaker = RestartBreaker{Enabled: true, MinIneffective: 2, Window: 10 * time.Minute}

// compileBreaker applies the defaults and the API's rules to spec.restartEffectiveness.
func compileBreaker(r policyv1alpha1.RestartEffectiveness) (RestartBreaker, error) {
	out := DefaultRestartBreaker
	switch r.Mode {
	case "", policyv1alpha1.BreakerEnforce:
	case policyv1alpha1.BreakerDisabled:
		out.Enabled = false
	default:
		return out, fmt.Errorf("spec.restartEffectiveness.mode: must be Enforce or Disabled, got %q", r.Mode)
	}
	if n := r.MinIneffective; n != 0 {
		if n < 1 || n > 1000 {
			return out, fmt.Errorf("spec.restartEffectiveness.minIneffective: must be from 1 to 1000, got %d", n)
		}
		out.MinIneffective = n
	}
	if r.Window != nil {
		if w := r.Window.Duration; w < time.Minute || w > 24*time.Hour {
			return out, fmt.Errorf("spec.restartEffectiveness.window: must be between 1m and 24h, got %s", w)
		}
		out.Window = r.Window.Duration
	}
	switch r.Action {
	case "", policyv1alpha1.IneffectiveHold:
	case policyv1alpha1.IneffectiveEvict:
		if !out.Enabled {
			return out, fmt.Errorf("spec.restartEffectiveness.action: Evict needs mode Enforce, got mode %q", r.Mode)
		}
		out.Evict = true
	default:
		return out, fmt.Errorf("spec.restartEffectiveness.action: must be Hold or Evict, got %q", r.Action)
	}
	return out, nil
}

// RestartBreaker combines the breakers of the governing policies, most restrictive first: on if
// any enforces it, with the smallest minIneffective and the longest window of those that do,
// evicting only if all of those do, and the policy that set minIneffective.
func (g Governing) RestartBreaker() (RestartBreaker, PolicyKey) {
	var out RestartBreaker
	var by PolicyKey
	evict := true
	for i := range g {
		b := g[i].Breaker
		if !b.Enabled {
			continue
		}
		if !out.Enabled || b.MinIneffective < out.MinIneffective {
			out.MinIneffective, by = b.MinIneffective, g[i].Key
		}
		out.Enabled = true
		out.Window = max(out.Window, b.Window)
		evict = evict && b.Evict
	}
	// A pod is evicted only if every policy that enforces the breaker asks for it.
	out.Evict = out.Enabled && evict
	return out, by
}

// RestartTally counts a workload's restarts within the breaker's window.
type RestartTally struct {
	// Requested restarts within the window.
	Requested int32
	// Ineffective: those whose new container failed its probe again soon after the restart.
	Ineffective int32
}

// Tripped reports whether restarting the workload is not helping: at least MinIneffective of its
// restarts in the window failed again soon, and they are most of them.
func (b RestartBreaker) Tripped(t RestartTally) bool {
	return b.Enabled && t.Ineffective >= b.MinIneffective && 2*t.Ineffective > t.Requested
}

// SoonAfterRestart is how long after a restarted container starts a failure of its probe counts
// as the restart not having helped: the time the probe needs to fail from the start, and three
// periods more. Unset (zero) period and threshold take the API's defaults, 10 s and 3, as the
// daemon does.
func SoonAfterRestart(initialDelaySeconds, failureThreshold, periodSeconds int32) time.Duration {
	if periodSeconds <= 0 {
		periodSeconds = 10
	}
	if failureThreshold <= 0 {
		failureThreshold = 3
	}
	return time.Duration(initialDelaySeconds+(failureThreshold+3)*periodSeconds) * time.Second
}
