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

// Package httpget builds the HTTP request of a corev1.HTTPGetAction as the kubelet does, shared
// by the node daemon's HTTP liveness probes and its preStop hooks.
package httpget

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// NewRequest builds the GET request of an httpGet action, for a liveness probe and a lifecycle
// hook alike (the kubelet, too, builds both with one function): host = action.Host or podIP,
// the port resolved against container, the path kept with its query, and the kubelet's default
// headers (User-Agent userAgent, Accept */*) unless the action sets them; an empty value
// removes a header, a Host header sets the Host line while the pod IP is dialled. The request's
// Header may be shared with other requests and must not be modified.
func NewRequest(action *corev1.HTTPGetAction, container *corev1.Container, podIP, userAgent string) (*http.Request, error) {
	scheme := strings.ToLower(string(action.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host := action.Host
	if host == "" {
		host = podIP
	}
	port, err := podutil.ResolvePort(action.Port, container)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(action.Path)
	if err != nil {
		u = &url.URL{Path: action.Path}
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))

	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if len(action.HTTPHeaders) == 0 {
		req.Header, req.Host = defaultHeader(userAgent), ""
		return req, nil
	}
	h := make(http.Header, len(action.HTTPHeaders)+2)
	for _, hh := range action.HTTPHeaders {
		h.Add(hh.Name, hh.Value) // repeated names become separate header lines
	}
	if _, ok := h["User-Agent"]; !ok {
		h.Set("User-Agent", userAgent)
	}
	// An empty User-Agent stays in the map: net/http then sends none at all.
	if _, ok := h["Accept"]; !ok {
		h.Set("Accept", "*/*")
	} else if h.Get("Accept") == "" {
		h.Del("Accept")
	}
	req.Header = h
	req.Host = h.Get("Host")
	return req, nil
}

// defaultHeaders holds one read-only header map per User-Agent for actions without headers of
// their own (nearly all): a node with thousands of HTTP probes keeps a request per probe, and a
// map each was a tenth of the probe engine's live heap. net/http only reads a request's Header.
var defaultHeaders sync.Map // user agent -> http.Header

func defaultHeader(userAgent string) http.Header {
	if h, ok := defaultHeaders.Load(userAgent); ok {
		return h.(http.Header)
	}
	h, _ := defaultHeaders.LoadOrStore(userAgent, http.Header{"User-Agent": {userAgent}, "Accept": {"*/*"}})
	return h.(http.Header)
}
