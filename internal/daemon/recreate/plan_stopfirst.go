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

package recreate

import (
	"time"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// StopFirstMaxAge is how long after this process first saw a request its stops may still start
// before the status write that records them. The manager fails a request that no daemon took up
// within a minute (its pickup timeout). The daemon sees a request by its watch within moments of
// its creation, or, after a restart, by its cache's first list, which shows it as it is then: a
// request it saw this recently had not been failed that way when it was seen, and the write that
// follows the stop within moments settles the rest (the manager fails only a request whose phase
// is still empty). The age is the node's own: creationTimestamp is the API server's clock, which
// the node's may be far from.
const StopFirstMaxAge = 10 * time.Second

// mayStopFirst reports whether the stops of kill may start before the status write that records
// their instances, saving that round trip on the way to the restart. It holds when
//   - every instance to stop is the one the request's immutable spec names (statusContext, and no
//     forceRecreate): a step made again, by this process after a failed write or by a daemon
//     restarted in between, can only stop that same instance, which is then found exited or gone,
//     and never its successor; and
//   - the request was seen fresh (StopFirstMaxAge): the only ways the manager fails a younger request
//     are ones the executor checks itself (the deadline) or that make the stop moot (its pod
//     gone, replaced or terminating).
//
// Otherwise the write goes first and proves the plan's status is current.
func mayStopFirst(o Observation, states []appsv1alpha1.ContainerRecreateState, kill []string) bool {
	if len(kill) == 0 || o.Now.Sub(o.FirstSeen) >= StopFirstMaxAge {
		return false
	}
	pinned := map[string]string{}
	for _, c := range o.Containers {
		pinned[c.Name] = pinnedInstance(c, o.Strategy)
	}
	for _, name := range kill {
		id := pinned[name]
		if id == "" {
			return false
		}
		for _, s := range states {
			if s.Name == name && s.ContainerID != id {
				return false
			}
		}
	}
	return true
}
