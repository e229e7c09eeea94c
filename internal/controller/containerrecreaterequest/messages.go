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

package containerrecreaterequest

import (
	"fmt"
	"time"
)

// Why the manager failed a request, for status.message and the Warning event.

func podGoneMessage(pod string) string {
	return fmt.Sprintf("pod %q no longer exists", pod)
}

func podReplacedMessage(pod, requestedUID, currentUID string) string {
	return fmt.Sprintf("pod %q was replaced by a new pod (UID %s, the request was for UID %s)", pod, currentUID, requestedUID)
}

func podTerminatingMessage(pod string) string {
	return fmt.Sprintf("pod %q is terminating", pod)
}

// deadlineMessage quotes the request's last status message, which says what it was waiting for.
func deadlineMessage(deadline time.Duration, last string) string {
	msg := fmt.Sprintf("the request did not finish within its active deadline of %s", deadline)
	if last != "" {
		msg += "; last status: " + last
	}
	return msg
}

func notPickedUpMessage(timeout time.Duration, node string) string {
	return fmt.Sprintf("no node daemon picked up the request within %s; is the daemon running on node %s?", timeout, node)
}

func stopInFlightMessage(deadline time.Duration) string {
	return fmt.Sprintf("the active deadline of %s passed while the node daemon's stop of the container is in flight; "+
		"the request keeps its pod until the stop returned, then fails", deadline)
}

func stopNeverEndedMessage(deadline, limit time.Duration, node string) string {
	return fmt.Sprintf("the node daemon's stop of the container was still in flight %s after the active deadline of %s; "+
		"no live daemon takes that long, so the request fails and frees its pod's restart budget "+
		"(is the daemon running on node %s?)", limit, deadline, node)
}
