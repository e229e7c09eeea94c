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

package explain

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Describe writes a probe the way `kubectl describe pod` shows one, so that the operator's probe
// reads as the kubelet's would: the handler, then delay, timeout, period and thresholds.
func Describe(p *corev1.Probe) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("%s delay=%ds timeout=%ds period=%ds #success=%d #failure=%d", handler(p.ProbeHandler),
		p.InitialDelaySeconds, p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold)
}

func handler(h corev1.ProbeHandler) string {
	switch {
	case h.Exec != nil:
		return fmt.Sprintf("exec [%s]", strings.Join(h.Exec.Command, " "))
	case h.HTTPGet != nil:
		g := h.HTTPGet
		u := url.URL{Scheme: strings.ToLower(string(g.Scheme)), Host: net.JoinHostPort(g.Host, g.Port.String()), Path: g.Path}
		if u.Scheme == "" {
			u.Scheme = "http"
		}
		return "http-get " + u.String()
	case h.TCPSocket != nil:
		return "tcp-socket " + net.JoinHostPort(h.TCPSocket.Host, h.TCPSocket.Port.String())
	case h.GRPC != nil:
		s := "grpc <pod>:" + strconv.Itoa(int(h.GRPC.Port))
		if h.GRPC.Service != nil && *h.GRPC.Service != "" {
			s += " " + *h.GRPC.Service
		}
		return s
	}
	return "unknown"
}
