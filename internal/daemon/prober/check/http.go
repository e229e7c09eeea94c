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
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/httpget"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

func init() {
	register(&kind{field: "httpGet", label: "http", build: newHTTPRunner, defaults: httpDefaults,
		uses: func(h *corev1.ProbeHandler) bool { return h.HTTPGet != nil }})
}

// httpDefaults sets the API server's defaults of an httpGet action (podutil.DefaultHTTPGet) on a
// copy of it.
func httpDefaults(h *corev1.ProbeHandler) {
	a := *h.HTTPGet
	podutil.DefaultHTTPGet(&a)
	h.HTTPGet = &a
}

// httpRunner runs an HTTP probe. It keeps its request, which net/http allows to send again once
// the response's body is closed: it is the same on every run.
type httpRunner struct {
	http    *HTTP
	req     *http.Request
	timeout time.Duration
}

func newHTTPRunner(ctx context.Context, env *Env, s *Spec) (Runner, error) {
	a := s.Probe.HTTPGet
	if a.Host == "" && s.PodIP == "" {
		return nil, errNoPodIP
	}
	req, err := httpget.NewRequest(a, s.Container, s.PodIP, env.UserAgent)
	if err != nil {
		return nil, err
	}
	return &httpRunner{http: env.HTTP, req: req.WithContext(ctx), timeout: s.timeout()}, nil
}

// Run sends the request; the context it was built with bounds it.
func (r *httpRunner) Run(context.Context, string) (Outcome, error) {
	return r.http.Probe(r.req, r.timeout)
}

// connBufferSize is the size of each connection's read and write buffer.
const connBufferSize = 1 << 10

// maxRedirects bounds same-host redirects, as net/http's default policy does.
const maxRedirects = 10

// HTTP runs HTTP(S) GET probes. One value serves every worker; it holds no connections because
// every probe opens its own (keep-alive off), so the application sees the kubelet's traffic.
type HTTP struct {
	transport *http.Transport
}

// NewHTTP returns an HTTP prober: no keep-alive, no proxy from the environment, no
// Accept-Encoding, TLS without verification (HTTP/2 when the server offers it over TLS, as the
// kubelet's transport does), and sockets closed with a 1 s linger.
func NewHTTP() *HTTP {
	return &HTTP{transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // probes, like the kubelet's, do not verify
		DisableKeepAlives:   true,
		Proxy:               http.ProxyURL(nil),
		DisableCompression:  true,
		DialContext:         dialer().DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		// A connection serves one probe: a request of a few hundred bytes and a response read up
		// to 10 KiB. The 4 KiB default buffers were 40 % of the bytes allocated per probe; longer
		// lines and bodies still work, they only take more reads.
		ReadBufferSize:  connBufferSize,
		WriteBufferSize: connBufferSize,
	}}
}

// Probe sends req with one timeout covering dial, redirects, headers and body.
// A transport error is a Failure whose message is the Go error; a body that cannot be read
// is an error (the worker retries and then drops it), as in the kubelet. The body is part of
// the message only (the kubelet's events), never of the reason.
func (p *HTTP) Probe(req *http.Request, timeout time.Duration) (Outcome, error) {
	c := &http.Client{Timeout: timeout, Transport: p.transport, CheckRedirect: sameHostRedirects}
	res, err := c.Do(req)
	if err != nil {
		return Outcome{Result: Failure, Message: err.Error(), Reason: errorReason(err, timeout)}, nil
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(res.Body, MaxOutput))
	if err != nil {
		return Outcome{Result: Failure}, err
	}
	if res.StatusCode >= http.StatusOK && res.StatusCode < http.StatusBadRequest {
		if res.StatusCode >= http.StatusMultipleChoices {
			return Outcome{Result: Warning, Message: "Probe terminated redirects, Response body: " + string(b),
				Reason: fmt.Sprintf("redirect not followed (statuscode: %d)", res.StatusCode)}, nil
		}
		return Outcome{Result: Success, Message: string(b)}, nil
	}
	msg := fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode)
	return Outcome{Result: Failure, Message: msg, Reason: msg}, nil
}

// sameHostRedirects follows redirects that stay on the probed hostname (up to 10) and hands a
// redirect to another host back as the response, which the probe reports as a warning.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	return nil
}
