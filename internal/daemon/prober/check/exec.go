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

func init() {
	register(&kind{field: "exec", label: "exec", build: newExecRunner,
		uses: func(h *corev1.ProbeHandler) bool { return h.Exec != nil }})
}

// execRunner runs an exec probe; it keeps the command with $(VAR) expanded from the env of the
// container's spec.
type execRunner struct {
	rt      cri.Execer
	cmd     []string
	timeout time.Duration
}

func newExecRunner(_ context.Context, env *Env, s *Spec) (Runner, error) {
	if env.Runtime == nil {
		return nil, errors.New("no container runtime connection for exec probes")
	}
	var vars []corev1.EnvVar
	if s.Container != nil {
		vars = s.Container.Env
	}
	return &execRunner{rt: env.Runtime, cmd: ExpandCommand(s.Probe.Exec.Command, vars), timeout: s.timeout()}, nil
}

// Run runs the command; an error of the runtime is a RuntimeError.
func (r *execRunner) Run(ctx context.Context, containerID string) (Outcome, error) {
	o, err := Exec(ctx, r.rt, containerID, r.cmd, r.timeout)
	if err != nil {
		return o, &RuntimeError{Op: "ExecSync", Err: err}
	}
	return o, nil
}

// Exec runs cmd in the container through CRI ExecSync with timeout. Exit 0 passes; another exit
// code fails with stdout then stderr (at most 10 KiB) as the message and the exit code as the
// reason; a timeout fails with the runtime's "command timed out" message; any other runtime
// error is an error (retried, then dropped).
func Exec(ctx context.Context, rt cri.Execer, containerID string, cmd []string, timeout time.Duration) (Outcome, error) {
	r := cri.Exec(ctx, rt, containerID, cmd, timeout, MaxOutput)
	switch {
	case r.TimedOut():
		return Outcome{Result: Failure, Message: r.Err.Error(), Reason: timeoutReason(timeout)}, nil
	case r.Err != nil:
		return Outcome{Result: Unknown}, r.Err
	case r.ExitCode != 0:
		return Outcome{Result: Failure, Message: string(r.Output), Reason: fmt.Sprintf("exit code %d", r.ExitCode)}, nil
	default:
		return Outcome{Result: Success, Message: string(r.Output)}, nil
	}
}

// ExpandCommand substitutes $(VAR) in cmd with the container's env values as written in the
// spec (valueFrom variables expand to the empty string, unknown names stay as written, $$ is a
// literal $), the way the kubelet expands probe commands.
func ExpandCommand(cmd []string, env []corev1.EnvVar) []string {
	if len(cmd) == 0 {
		return nil
	}
	vars := make(map[string]string, len(env))
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	out := make([]string, len(cmd))
	for i, c := range cmd {
		out[i] = expand(c, vars)
	}
	return out
}

func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; next {
		case '$': // escaped operator
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 { // unterminated: kept as written
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
