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

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Step 1: the result is fresh and real. A stale result never restarts anything.

// Stale applies the first half of step 1, from the pod and the result alone: a result for a pod
// that is gone or terminating, or for a container that is no longer the running one, is ignored.
// The facts builder uses it to skip reading the rest.
func Stale(f *Facts, x Failure) (Verdict, bool) {
	if !f.Found || f.Terminating {
		return Verdict{Outcome: Ignore, Message: "pod is gone or terminating"}, true
	}
	if x.Running == "" || x.Running != x.ContainerID {
		return Verdict{Outcome: Ignore, Message: fmt.Sprintf(
			"stale result: reported for %q, running container is %q", x.ContainerID, x.Running)}, true
	}
	return Verdict{}, false
}

// daemonReporting: the results of a daemon whose Lease is missing or expired cannot be trusted.
func daemonReporting(c *judged) (Verdict, bool) {
	if c.f.Daemon.Reporting {
		return Verdict{}, false
	}
	return hold(policyv1alpha1.HoldDaemonNotReporting,
		"the daemon of node %s is not reporting (Lease missing or expired); its results cannot be trusted", c.f.Node.Name), true
}

// freshEvidence: a result the daemon no longer refreshes, or that an earlier daemon left, is no
// evidence.
func freshEvidence(c *judged) (Verdict, bool) {
	why, stale := StaleEvidence(c.f.Daemon, c.x, c.f.Node.Name)
	if !stale {
		return Verdict{}, false
	}
	return hold(policyv1alpha1.HoldDaemonNotReporting, "%s; waiting for a new probe of container %s", why, c.x.Container), true
}

// StaleEvidence reports why a Failed result is no evidence for a restart: it was taken before the
// node's daemon started (an earlier instance left it in the status), or it is older than
// FailedStaleAfter its probe's interval (the period, or the timeout when longer) at the daemon's
// last heartbeat (the daemon stopped refreshing it). A result without a probe time, or a daemon
// without a start, is not judged.
func StaleEvidence(d Daemon, x Failure, node string) (string, bool) {
	if x.ProbeTime.IsZero() {
		return "", false
	}
	if !d.Started.IsZero() && x.ProbeTime.Before(d.Started) {
		return fmt.Sprintf("the result was taken at %s, before the daemon of node %s started at %s",
			x.ProbeTime.UTC().Format(time.RFC3339), node, d.Started.UTC().Format(time.RFC3339)), true
	}
	interval := appsv1alpha1.ProbeInterval(x.Period, x.Timeout)
	if limit := appsv1alpha1.FailedStaleAfter(interval); !d.Renewed.IsZero() && d.Renewed.Sub(x.ProbeTime) > limit {
		return fmt.Sprintf("the result is %s old, more than %s for a probe interval of %ds",
			d.Renewed.Sub(x.ProbeTime).Round(time.Second), limit, interval), true
	}
	return "", false
}
