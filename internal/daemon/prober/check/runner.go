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

package check

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

// Runner runs one probe of one kind (exec, httpGet, tcpSocket, grpc). It is built for one
// version of a probe on one version of its pod, and keeps what it derives from them (the HTTP
// request, the $(VAR)-expanded command, the resolved port): the worker builds a new one when the
// pod or the probe changes. A runner serves one worker, whose runs never overlap.
type Runner interface {
	// Run probes the container once. An error means the probe could not be run: no result
	// (docs/probe-semantics.md #14).
	Run(ctx context.Context, containerID string) (Outcome, error)
}

// Env is what the runners of a node share.
type Env struct {
	// Runtime runs exec probes; nil makes them error.
	Runtime cri.Execer
	// HTTP runs HTTP probes.
	HTTP *HTTP
	// UserAgent of HTTP and gRPC probes: kube-probe/<major>.<minor>.
	UserAgent string
}

// Spec is what a runner is built from.
type Spec struct {
	// Probe is defaulted; the runner may keep pointers into it, so it must not change.
	Probe *corev1.Probe
	// Container is the probed container's spec (named ports, env); nil when the pod has none of
	// that name.
	Container *corev1.Container
	// PodIP is the address to probe when the handler names no host: the pod sandbox's, as the
	// container runtime reports it (never the pod's status.podIP, which a pods/status writer sets).
	PodIP string
}

func (s *Spec) timeout() time.Duration { return time.Duration(s.Probe.TimeoutSeconds) * time.Second }

// RuntimeError is an error of the container runtime (a CRI call that failed), not of the probe.
type RuntimeError struct {
	// Op is the CRI operation, e.g. ExecSync.
	Op  string
	Err error
}

func (e *RuntimeError) Error() string { return e.Err.Error() }
func (e *RuntimeError) Unwrap() error { return e.Err }

var errNoPodIP = errors.New("the pod has no IP address yet")

// kind is one kind of probe handler. Each registers itself from its own file, so that a new kind
// is one file of this package. A probe names exactly one handler (the NodePodProbe's validation
// and the probe context's refuse others), so the order of the kinds decides nothing.
type kind struct {
	// field names the handler in the API; label in metrics.
	field, label string
	// uses reports whether h is of this kind.
	uses func(h *corev1.ProbeHandler) bool
	// defaults, when set, fills what the API server defaults in the kind's action; it copies the
	// action rather than modify it.
	defaults func(h *corev1.ProbeHandler)
	// build returns the runner of s; an error is why the probe cannot run (no pod IP yet, a
	// named port the container does not have). ctx bounds the runner's requests for its life.
	build func(ctx context.Context, env *Env, s *Spec) (Runner, error)
}

var kinds []*kind

func register(k *kind) { kinds = append(kinds, k) }

func kindOf(h *corev1.ProbeHandler) *kind {
	for _, k := range kinds {
		if k.uses(h) {
			return k
		}
	}
	return nil
}

// DialsPod reports whether h connects to the pod's own address: an HTTP or TCP probe that names
// no host, or a gRPC probe (which cannot name one).
func DialsPod(h *corev1.ProbeHandler) bool {
	return h.HTTPGet != nil && h.HTTPGet.Host == "" || h.TCPSocket != nil && h.TCPSocket.Host == "" || h.GRPC != nil
}

// Label names the kind of h in metrics (exec, http, tcp, grpc), or "none".
func Label(h *corev1.ProbeHandler) string {
	if k := kindOf(h); k != nil {
		return k.label
	}
	return "none"
}

// SetDefaults fills what the API server defaults in the action of h (an HTTP probe's path and
// scheme). It never modifies what h points to: a changed action is a copy.
func SetDefaults(h *corev1.ProbeHandler) {
	if k := kindOf(h); k != nil && k.defaults != nil {
		k.defaults(h)
	}
}

// NewRunner returns the runner of s, of the kind of its handler. A probe that cannot run (no
// handler, no pod IP yet, a named port the container does not have) gets a runner that fails
// every run with the reason, as an error: the worker builds a new one when the pod or the probe
// changes. ctx bounds the runner's requests for its whole life.
func NewRunner(ctx context.Context, env Env, s Spec) Runner {
	k := kindOf(&s.Probe.ProbeHandler)
	if k == nil {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = k.field
		}
		return failing{fmt.Errorf("the probe has no handler (%s or %s)",
			strings.Join(names[:len(names)-1], ", "), names[len(names)-1])}
	}
	r, err := k.build(ctx, &env, &s)
	if err != nil {
		return failing{err}
	}
	return r
}

// failing is the runner of a probe that cannot run.
type failing struct{ err error }

func (f failing) Run(context.Context, string) (Outcome, error) { return Outcome{}, f.err }
