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

// Package diff checks, behaviour by behaviour (docs/probe-semantics.md #16-#25), that the daemon's probers
// and the kubelet's own pkg/probe/{http,tcp,grpc} give the same result and the same message
// against the same loopback server.
package diff

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	grpchealth "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/component-base/version"
	kprobe "k8s.io/kubernetes/pkg/probe"
	kgrpc "k8s.io/kubernetes/pkg/probe/grpc"
	khttp "k8s.io/kubernetes/pkg/probe/http"
	ktcp "k8s.io/kubernetes/pkg/probe/tcp"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/httpget"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
)

// outcome is what a probe returned, in a form both implementations share.
type outcome struct {
	Result string
	Output string
	Err    bool
}

// ours compares our message (what the pod's events show) with the kubelet's output; the short
// reason for the NodePodProbeReport has no counterpart in the kubelet.
func ours(o check.Outcome, err error) outcome {
	return outcome{Result: o.Result.String(), Output: o.Message, Err: err != nil}
}

func kubelets(r kprobe.Result, out string, err error) outcome {
	return outcome{Result: string(r), Output: out, Err: err != nil}
}

// kubeletUA is the User-Agent the kubelet's request builder sets in this build; ours is given
// the same string so that echoed headers compare byte for byte.
func kubeletUA() string {
	v := version.Get()
	return fmt.Sprintf("kube-probe/%s.%s", v.Major, v.Minor)
}

// echo writes the request line and every header line, sorted, as the body.
func echo(w http.ResponseWriter, r *http.Request) {
	lines := []string{r.Proto + " " + r.Method + " " + r.RequestURI + " host=" + r.Host}
	for k, vs := range r.Header {
		lines = append(lines, k+": "+strings.Join(vs, " | "))
	}
	sort.Strings(lines[1:])
	_, _ = w.Write([]byte(strings.Join(lines, "\n")))
}

func httpServer(t *testing.T, tls bool) *httptest.Server {
	return newHTTPServer(t, tls, false)
}

// newHTTPServer serves the behaviours; h2 offers HTTP/2 over TLS (ALPN), as many apps do.
func newHTTPServer(t *testing.T, tls, h2 bool) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", echo)
	mux.HandleFunc("/code/", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/code/"))
		w.WriteHeader(code)
		_, _ = w.Write([]byte("body of " + strconv.Itoa(code)))
	})
	mux.HandleFunc("/redirect-same", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/echo", http.StatusFound) })
	mux.HandleFunc("/redirect-to-500", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/code/500", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/redirect-other", func(w http.ResponseWriter, r *http.Request) {
		u, _ := url.Parse("http://" + r.Host)
		http.Redirect(w, r, "http://localhost:"+u.Port()+"/echo", http.StatusFound)
	})
	mux.HandleFunc("/loop/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/loop/"))
		http.Redirect(w, r, fmt.Sprintf("/loop/%d", n+1), http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/slow-headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/slow-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("0123456789", 100_000)))
	})
	var srv *httptest.Server
	if tls {
		srv = httptest.NewUnstartedServer(mux)
		srv.EnableHTTP2 = h2
		srv.StartTLS()
	} else {
		srv = httptest.NewServer(mux)
	}
	t.Cleanup(func() { close(release); srv.Close() })
	return srv
}

func hostPort(t *testing.T, raw string) (string, int) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(u.Port())
	return u.Hostname(), p
}

func TestDiff_HTTP_16_to_23(t *testing.T) {
	plain := httpServer(t, false)
	secure := httpServer(t, true)
	secureH2 := newHTTPServer(t, true, true)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	refusedPort := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	type tc struct {
		name    string
		srv     *httptest.Server
		action  corev1.HTTPGetAction
		timeout time.Duration
		port    int    // overrides the server's port
		prefix  string // the output must start with it (on both sides)
	}
	h := func(kv ...string) []corev1.HTTPHeader {
		var out []corev1.HTTPHeader
		for i := 0; i < len(kv); i += 2 {
			out = append(out, corev1.HTTPHeader{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	cases := []tc{
		{name: "16 path and query", srv: plain, action: corev1.HTTPGetAction{Path: "/echo?a=1&b=%2F"}},
		{name: "16 no path", srv: plain, action: corev1.HTTPGetAction{}},
		{name: "17 default headers", srv: plain, action: corev1.HTTPGetAction{Path: "/echo"}},
		{name: "17 empty User-Agent and Accept removed", srv: plain, action: corev1.HTTPGetAction{Path: "/echo", HTTPHeaders: h("User-Agent", "", "Accept", "")}},
		{name: "17 custom Host header", srv: plain, action: corev1.HTTPGetAction{Path: "/echo", HTTPHeaders: h("Host", "app.example.com")}},
		{name: "17 repeated and custom headers", srv: plain, action: corev1.HTTPGetAction{Path: "/echo", HTTPHeaders: h("X-A", "1", "x-a", "2", "Accept", "application/json", "User-Agent", "mine")}},
		{name: "18 https without verification", srv: secure, action: corev1.HTTPGetAction{Path: "/echo", Scheme: corev1.URISchemeHTTPS}},
		{name: "18 https to a server offering HTTP/2", srv: secureH2, action: corev1.HTTPGetAction{Path: "/echo", Scheme: corev1.URISchemeHTTPS}, prefix: "HTTP/2.0 GET"},
		{name: "18 https without HTTP/2", srv: secure, action: corev1.HTTPGetAction{Path: "/echo", Scheme: corev1.URISchemeHTTPS}, prefix: "HTTP/1.1 GET"},
		{name: "19 slow headers", srv: plain, action: corev1.HTTPGetAction{Path: "/slow-headers"}, timeout: 200 * time.Millisecond},
		{name: "19 slow body", srv: plain, action: corev1.HTTPGetAction{Path: "/slow-body"}, timeout: 200 * time.Millisecond},
		{name: "20 redirect to another host not followed", srv: plain, action: corev1.HTTPGetAction{Path: "/redirect-other"}},
		{name: "21 same-host redirect followed", srv: plain, action: corev1.HTTPGetAction{Path: "/redirect-same"}},
		{name: "21 same-host redirect to a 500", srv: plain, action: corev1.HTTPGetAction{Path: "/redirect-to-500"}},
		{name: "21 redirect loop", srv: plain, action: corev1.HTTPGetAction{Path: "/loop/0"}},
		{name: "22 big body", srv: plain, action: corev1.HTTPGetAction{Path: "/big"}},
		{name: "23 connection refused", srv: plain, action: corev1.HTTPGetAction{Path: "/"}, port: refusedPort},
	}
	for _, code := range []int{200, 201, 204, 299, 300, 301, 304, 399, 400, 401, 404, 500, 503} {
		cases = append(cases, tc{name: fmt.Sprintf("20 status %d", code), srv: plain, action: corev1.HTTPGetAction{Path: fmt.Sprintf("/code/%d", code)}})
	}

	ua := kubeletUA()
	kp := khttp.New(false) // the kubelet's liveness prober does not follow redirects to other hosts
	op := check.NewHTTP()
	container := &corev1.Container{Name: "app"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host, port := hostPort(t, c.srv.URL)
			if c.port != 0 {
				port = c.port
			}
			timeout := c.timeout
			if timeout == 0 {
				timeout = time.Second
			}
			a := c.action
			a.Port = intstr.FromInt32(int32(port))

			kreq, kerr := khttp.NewRequestForHTTPGetAction(&a, container, host, "probe")
			oreq, oerr := httpget.NewRequest(&a, container, host, ua)
			if (kerr != nil) != (oerr != nil) {
				t.Fatalf("request errors differ: kubelet %v, ours %v", kerr, oerr)
			}
			if kreq.URL.String() != oreq.URL.String() || kreq.Host != oreq.Host || fmt.Sprint(kreq.Header) != fmt.Sprint(oreq.Header) {
				t.Fatalf("requests differ:\nkubelet %s host=%q %v\nours    %s host=%q %v", kreq.URL, kreq.Host, kreq.Header, oreq.URL, oreq.Host, oreq.Header)
			}
			k := kubelets(kp.Probe(kreq, timeout))
			o := ours(op.Probe(oreq, timeout))
			if k != o {
				t.Errorf("results differ:\nkubelet %+v\nours    %+v", k, o)
			}
			if !strings.HasPrefix(o.Output, c.prefix) {
				t.Errorf("output %.40q, want prefix %q", o.Output, c.prefix)
			}
		})
	}
}

func TestDiff_TCP_24(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := closed.Addr().(*net.TCPAddr).Port
	_ = closed.Close()
	for name, port := range map[string]int{"listening": l.Addr().(*net.TCPAddr).Port, "refused": refused} {
		k := kubelets(ktcp.New().Probe("127.0.0.1", port, time.Second))
		o := ours(check.TCP("127.0.0.1", port, time.Second))
		if k != o {
			t.Errorf("%s: kubelet %+v, ours %+v", name, k, o)
		}
	}
}

func TestDiff_GRPC_25(t *testing.T) {
	serve := func(withHealth bool) (int, *health.Server) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := grpc.NewServer()
		var hs *health.Server
		if withHealth {
			hs = health.NewServer()
			grpchealth.RegisterHealthServer(s, hs)
		}
		go func() { _ = s.Serve(l) }()
		t.Cleanup(s.Stop)
		return l.Addr().(*net.TCPAddr).Port, hs
	}
	port, hs := serve(true)
	hs.SetServingStatus("up", grpchealth.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", grpchealth.HealthCheckResponse_NOT_SERVING)
	hs.SetServingStatus("unknown", grpchealth.HealthCheckResponse_SERVICE_UNKNOWN)
	noHealth, _ := serve(false)

	// A listener that never speaks HTTP/2: the dial never completes.
	silent, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer func() { _ = silent.Close() }()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			go func() { <-ctx.Done(); _ = c.Close() }()
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := closed.Addr().(*net.TCPAddr).Port
	_ = closed.Close()

	cases := []struct {
		name    string
		port    int
		service string
		timeout time.Duration
	}{
		{"serving (overall)", port, "", time.Second},
		{"serving", port, "up", time.Second},
		{"not serving", port, "down", time.Second},
		{"service unknown status", port, "unknown", time.Second},
		{"unregistered service", port, "nope", time.Second},
		{"unimplemented", noHealth, "", time.Second},
		{"dial timeout", silent.Addr().(*net.TCPAddr).Port, "", 300 * time.Millisecond},
		{"refused", refused, "", 300 * time.Millisecond},
	}
	ua := kubeletUA()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := kubelets(kgrpc.New().Probe("127.0.0.1", c.service, c.port, c.timeout, kgrpc.ProbeOptions{}))
			o := ours(check.GRPC("127.0.0.1", c.service, c.port, c.timeout, ua))
			if k != o {
				t.Errorf("results differ:\nkubelet %+v\nours    %+v", k, o)
			}
		})
	}
}
