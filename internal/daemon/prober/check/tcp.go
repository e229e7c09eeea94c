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
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

func init() {
	register(&kind{field: "tcpSocket", label: "tcp", build: newTCPRunner,
		uses: func(h *corev1.ProbeHandler) bool { return h.TCPSocket != nil }})
}

// tcpRunner runs a TCP probe; it keeps the host and the resolved port.
type tcpRunner struct {
	host    string
	port    int
	timeout time.Duration
}

func newTCPRunner(_ context.Context, _ *Env, s *Spec) (Runner, error) {
	a := s.Probe.TCPSocket
	port, err := podutil.ResolvePort(a.Port, s.Container)
	if err != nil {
		return nil, err
	}
	host := a.Host
	if host == "" {
		host = s.PodIP
	}
	if host == "" {
		return nil, errNoPodIP
	}
	return &tcpRunner{host: host, port: port, timeout: s.timeout()}, nil
}

func (r *tcpRunner) Run(context.Context, string) (Outcome, error) {
	return TCP(r.host, r.port, r.timeout)
}

// TCP opens a connection to host:port within timeout and closes it without sending anything.
func TCP(host string, port int, timeout time.Duration) (Outcome, error) {
	d := dialer()
	d.Timeout = timeout
	conn, err := d.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return Outcome{Result: Failure, Message: err.Error(), Reason: errorReason(err, timeout)}, nil
	}
	_ = conn.Close()
	return Outcome{Result: Success}, nil
}
