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

// Package check runs one liveness probe of each kind (HTTP, TCP, gRPC, exec) with the kubelet's
// semantics: what is dialled, what is sent, what passes and what the failure message says. Each
// kind, in its own file, has a Runner that keeps what it derives from the pod and the probe;
// the results and the worker's schedule live in the parent package.
package check

import (
	"net"
	"syscall"
)

// Result is the outcome of one probe run.
type Result int

const (
	// Unknown is returned together with an error: the probe could not be run.
	Unknown Result = iota
	// Success means the container answered as healthy.
	Success
	// Warning is a success with something the user should know (an unfollowed redirect).
	Warning
	// Failure means the container answered as unhealthy, or did not answer.
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "success"
	case Warning:
		return "warning"
	case Failure:
		return "failure"
	default:
		return "unknown"
	}
}

// MaxOutput is how much of a response body or command output is read (10 KiB, as the kubelet).
const MaxOutput = 10 << 10

// dialer returns a dialer whose sockets close with SO_LINGER 1 s: a probe every second per
// container would otherwise leave thousands of sockets in TIME_WAIT on a busy node.
func dialer() *net.Dialer {
	return &net.Dialer{
		Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) {
				_ = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
			})
		},
	}
}
