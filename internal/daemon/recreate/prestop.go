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
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/httpget"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// maxHookOutput bounds the hook output quoted in messages and events.
const maxHookOutput = 512

// HookRunner runs a container's preStop hook the way the kubelet does, from the node.
type HookRunner struct {
	Runtime cri.Runtime
	// Addresses gives the pod address that HTTP and TCP hooks naming no host connect to.
	Addresses *cri.Addresses
	Clock     clock.Clock
	// UserAgent of HTTP hooks; the kubelet sends "kube-lifecycle/<major>.<minor>".
	UserAgent string
}

// Run runs handler for container c of pod (instance containerID), bounded by timeout. The error
// says what failed, for the FailedPreStopHook event.
func (h *HookRunner) Run(ctx context.Context, pod *corev1.Pod, c *corev1.Container, containerID string,
	handler *corev1.LifecycleHandler, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case handler.Exec != nil:
		return h.exec(ctx, containerID, handler.Exec.Command, timeout)
	case handler.HTTPGet != nil:
		return h.httpGet(ctx, pod, c, handler.HTTPGet, timeout)
	case handler.TCPSocket != nil:
		return h.tcp(ctx, pod, c, handler.TCPSocket)
	case handler.Sleep != nil:
		return h.sleep(ctx, time.Duration(handler.Sleep.Seconds)*time.Second)
	default:
		return errors.New("preStop hook has no handler (exec, httpGet, tcpSocket or sleep)")
	}
}

// exec runs an exec hook through CRI ExecSync; a non-zero exit fails it, with its output.
func (h *HookRunner) exec(ctx context.Context, containerID string, cmd []string, timeout time.Duration) error {
	if len(cmd) == 0 {
		return errors.New("exec preStop hook: command is empty")
	}
	r := cri.Exec(ctx, h.Runtime, containerID, cmd, timeout, check.MaxOutput)
	// The runtime's timeout and the hook's context end together; either way the command timed out.
	if r.TimedOut() || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("exec preStop hook %q timed out after %s", strings.Join(cmd, " "), timeout)
	}
	what := ""
	switch {
	case r.Err != nil:
		what = r.Err.Error()
	case r.ExitCode != 0:
		what = fmt.Sprintf("exited with code %d", r.ExitCode)
	default:
		return nil
	}
	if out := strings.TrimSpace(string(r.Output)); out != "" {
		return fmt.Errorf("exec preStop hook %q failed: %s, output: %q", strings.Join(cmd, " "), what, truncate.String(out, maxHookOutput))
	}
	return fmt.Errorf("exec preStop hook %q failed: %s", strings.Join(cmd, " "), what)
}

// httpGet sends the hook's GET from the node; like the kubelet it ignores the status code, and
// only a transport error fails the hook.
func (h *HookRunner) httpGet(ctx context.Context, pod *corev1.Pod, c *corev1.Container, g *corev1.HTTPGetAction, timeout time.Duration) error {
	podIP := ""
	if g.Host == "" {
		a, err := h.Addresses.Of(ctx, pod)
		if err != nil {
			return fmt.Errorf("http preStop hook: httpGet.host is empty and the pod's address is not known: %w", err)
		}
		podIP = a.IP
	}
	ua := h.UserAgent
	if ua == "" {
		ua = "kube-lifecycle"
	}
	req, err := httpget.NewRequest(g, c, podIP, ua)
	if err != nil {
		return fmt.Errorf("http preStop hook: %w", err)
	}
	// Like the kubelet: no proxy, no keep-alive, no certificate check, one timeout for everything.
	tr := &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the kubelet does not verify hook endpoints either
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: timeout}).Do(req.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("http preStop hook GET %s failed: %w", req.URL.Redacted(), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, check.MaxOutput))
	_ = resp.Body.Close()
	return nil
}

// tcp opens and closes a connection to the hook's port.
func (h *HookRunner) tcp(ctx context.Context, pod *corev1.Pod, c *corev1.Container, t *corev1.TCPSocketAction) error {
	port, err := podutil.ResolvePort(t.Port, c)
	if err != nil {
		return fmt.Errorf("tcp preStop hook: %w", err)
	}
	host := t.Host
	if host == "" {
		a, err := h.Addresses.Of(ctx, pod)
		if err != nil {
			return fmt.Errorf("tcp preStop hook: tcpSocket.host is empty and the pod's address is not known: %w", err)
		}
		host = a.IP
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("tcp preStop hook to %s failed: %w", addr, err)
	}
	return conn.Close()
}

// sleep waits on the executor's clock, cut short by the grace period.
func (h *HookRunner) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-h.Clock.After(d):
		return nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil // the grace period ends the sleep; that is not a failure
		}
		return ctx.Err()
	}
}
