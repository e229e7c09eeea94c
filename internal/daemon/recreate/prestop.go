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
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

// maxHookOutput bounds the hook output quoted in messages and events.
const maxHookOutput = 512

// HookRunner runs a container's preStop hook the way the kubelet does, from the node.
type HookRunner struct {
	Runtime cri.Runtime
	Clock   clock.Clock
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

func (h *HookRunner) exec(ctx context.Context, containerID string, cmd []string, timeout time.Duration) error {
	if len(cmd) == 0 {
		return errors.New("exec preStop hook: command is empty")
	}
	stdout, stderr, err := h.Runtime.ExecSync(ctx, cri.TrimContainerID(containerID), cmd, timeout)
	if err == nil {
		return nil
	}
	// The runtime's timeout and the hook's context end together; either way the command timed out.
	if errors.Is(err, cri.ErrCommandTimedOut) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("exec preStop hook %q timed out after %s", strings.Join(cmd, " "), timeout)
	}
	out := strings.TrimSpace(string(stdout) + string(stderr))
	if len(out) > maxHookOutput {
		out = out[:maxHookOutput] + "..."
	}
	if out != "" {
		return fmt.Errorf("exec preStop hook %q failed: %v, output: %q", strings.Join(cmd, " "), err, out)
	}
	return fmt.Errorf("exec preStop hook %q failed: %v", strings.Join(cmd, " "), err)
}

func (h *HookRunner) httpGet(ctx context.Context, pod *corev1.Pod, c *corev1.Container, g *corev1.HTTPGetAction, timeout time.Duration) error {
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return fmt.Errorf("http preStop hook: %w", err)
	}
	host := g.Host
	if host == "" {
		host = pod.Status.PodIP
	}
	if host == "" {
		return errors.New("http preStop hook: the pod has no IP and httpGet.host is empty")
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if path != "" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u, err := url.Parse(scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + path)
	if err != nil {
		return fmt.Errorf("http preStop hook: bad URL: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("http preStop hook: %w", err)
	}
	ua := h.UserAgent
	if ua == "" {
		ua = "kube-lifecycle"
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "*/*")
	for _, hd := range g.HTTPHeaders {
		if strings.EqualFold(hd.Name, "Host") {
			req.Host = hd.Value
			continue
		}
		req.Header.Add(hd.Name, hd.Value)
	}
	// Like the kubelet: no proxy, no keep-alive, no certificate check, one timeout for everything.
	tr := &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the kubelet does not verify hook endpoints either
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: timeout}).Do(req)
	if err != nil {
		return fmt.Errorf("http preStop hook GET %s failed: %w", u.Redacted(), err)
	}
	// The kubelet ignores the status code of lifecycle hooks; only a transport error fails them.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
	_ = resp.Body.Close()
	return nil
}

func (h *HookRunner) tcp(ctx context.Context, pod *corev1.Pod, c *corev1.Container, t *corev1.TCPSocketAction) error {
	port, err := resolvePort(t.Port, c)
	if err != nil {
		return fmt.Errorf("tcp preStop hook: %w", err)
	}
	host := t.Host
	if host == "" {
		host = pod.Status.PodIP
	}
	if host == "" {
		return errors.New("tcp preStop hook: the pod has no IP and tcpSocket.host is empty")
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

// resolvePort turns a number or a named container port into a port number.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		if p.IntVal < 1 || p.IntVal > 65535 {
			return 0, fmt.Errorf("port %d is not in 1-65535", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil && n >= 1 && n <= 65535 {
		return n, nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, p.StrVal)
}
