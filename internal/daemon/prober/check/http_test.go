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
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/httpget"
)

const testUA = "kube-probe/1.37"

// rawServer answers every request with 200 and records the request head exactly as received.
func rawServer(t *testing.T) (addr string, heads func() []string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var mu sync.Mutex
	var got []string
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				r := bufio.NewReader(c)
				var head strings.Builder
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
					head.WriteString(line)
				}
				mu.Lock()
				got = append(got, head.String())
				mu.Unlock()
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
			}()
		}
	}()
	return "http://" + l.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

func TestHTTP_16_URLFromSchemeHostPortPathAndQuery(t *testing.T) {
	var gotURI, gotHost string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotURI, gotHost = r.RequestURI, r.Host
	}))
	defer srv.Close()
	res, _, err := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/healthz?verbose=1&x=%2F"}, time.Second)
	if err != nil || res != Success {
		t.Fatalf("got %v %v", res, err)
	}
	if gotURI != "/healthz?verbose=1&x=%2F" {
		t.Errorf("request URI = %q, want the path with its query", gotURI)
	}
	if h, _ := hostPort(t, srv.URL); !strings.HasPrefix(gotHost, h+":") {
		t.Errorf("Host = %q, want the pod IP and port", gotHost)
	}

	cases := []struct {
		name   string
		action corev1.HTTPGetAction
		podIP  string
		want   string
	}{
		{"pod IP when no host", corev1.HTTPGetAction{Path: "/a", Port: intstr.FromInt32(8080)}, "10.0.0.1", "http://10.0.0.1:8080/a"},
		{"host wins over pod IP", corev1.HTTPGetAction{Host: "10.9.9.9", Path: "/a", Port: intstr.FromInt32(80)}, "10.0.0.1", "http://10.9.9.9:80/a"},
		{"IPv6 bracketed", corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}, "fd00::1", "http://[fd00::1]:80/"},
		{"scheme lower-cased", corev1.HTTPGetAction{Scheme: corev1.URISchemeHTTPS, Path: "/x", Port: intstr.FromInt32(443)}, "10.0.0.1", "https://10.0.0.1:443/x"},
		{"empty path", corev1.HTTPGetAction{Port: intstr.FromInt32(80)}, "10.0.0.1", "http://10.0.0.1:80"},
		{"named port from container", corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("web")}, "10.0.0.1", "http://10.0.0.1:8081/"},
	}
	c := &corev1.Container{Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 8081}}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := httpget.NewRequest(&tc.action, c, tc.podIP, testUA)
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.String() != tc.want {
				t.Errorf("URL = %q, want %q", req.URL.String(), tc.want)
			}
		})
	}
	if _, err := httpget.NewRequest(&corev1.HTTPGetAction{Port: intstr.FromString("nope")}, c, "10.0.0.1", testUA); err == nil ||
		!strings.Contains(err.Error(), `port "nope" not found`) {
		t.Errorf("unresolvable named port: err = %v", err)
	}
}

func TestHTTP_17_DefaultHeaders(t *testing.T) {
	addr, heads := rawServer(t)
	if res, _, _ := probeHTTP(t, addr, corev1.HTTPGetAction{Path: "/"}, time.Second); res != Success {
		t.Fatalf("result %v", res)
	}
	h := heads()[0]
	for _, want := range []string{"User-Agent: kube-probe/1.37\r\n", "Accept: */*\r\n"} {
		if !strings.Contains(h, want) {
			t.Errorf("request head %q lacks %q", h, want)
		}
	}
}

func TestHTTP_17_EmptyHeaderValueRemovesHeader(t *testing.T) {
	addr, heads := rawServer(t)
	action := corev1.HTTPGetAction{Path: "/", HTTPHeaders: []corev1.HTTPHeader{{Name: "User-Agent"}, {Name: "Accept"}}}
	if res, _, _ := probeHTTP(t, addr, action, time.Second); res != Success {
		t.Fatalf("result %v", res)
	}
	h := heads()[0]
	for _, absent := range []string{"User-Agent:", "Accept:"} {
		if strings.Contains(h, absent) {
			t.Errorf("request head %q has %q although the probe set it empty", h, absent)
		}
	}
}

func TestHTTP_17_CustomHeadersOverrideDefaults(t *testing.T) {
	addr, heads := rawServer(t)
	action := corev1.HTTPGetAction{Path: "/", HTTPHeaders: []corev1.HTTPHeader{{Name: "User-Agent", Value: "mine"}, {Name: "Accept", Value: "application/json"}}}
	if res, _, _ := probeHTTP(t, addr, action, time.Second); res != Success {
		t.Fatalf("result %v", res)
	}
	h := heads()[0]
	for _, want := range []string{"User-Agent: mine\r\n", "Accept: application/json\r\n"} {
		if !strings.Contains(h, want) {
			t.Errorf("request head %q lacks %q", h, want)
		}
	}
}

func TestHTTP_17_HostHeaderSetsHostLineWhileDiallingPodIP(t *testing.T) {
	addr, heads := rawServer(t)
	action := corev1.HTTPGetAction{Path: "/", HTTPHeaders: []corev1.HTTPHeader{{Name: "Host", Value: "app.example.com"}}}
	if res, _, _ := probeHTTP(t, addr, action, time.Second); res != Success {
		t.Fatalf("result %v", res)
	}
	if h := heads()[0]; !strings.Contains(h, "Host: app.example.com\r\n") {
		t.Errorf("request head %q lacks the custom Host line", h)
	}
}

func TestHTTP_17_RepeatedHeaderNamesAreSeparateLines(t *testing.T) {
	addr, heads := rawServer(t)
	action := corev1.HTTPGetAction{Path: "/", HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "a"}, {Name: "x-probe", Value: "b"}}}
	if res, _, _ := probeHTTP(t, addr, action, time.Second); res != Success {
		t.Fatalf("result %v", res)
	}
	if h := heads()[0]; !strings.Contains(h, "X-Probe: a\r\nX-Probe: b\r\n") {
		t.Errorf("request head %q: want two X-Probe lines", h)
	}
}

func TestHTTP_18_NoKeepAliveNoProxyNoCompression(t *testing.T) {
	// A proxy from the environment must be ignored: this one does not exist.
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "" {
			t.Errorf("Accept-Encoding sent: %q", r.Header.Get("Accept-Encoding"))
		}
		if !r.Close {
			t.Errorf("request without Connection: close")
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	p := NewHTTP()
	host, port := hostPort(t, srv.URL)
	for range 3 {
		req, _ := httpget.NewRequest(&corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(port))}, nil, host, testUA)
		if res, out, err := triple(p.Probe(req, time.Second)); res != Success || err != nil {
			t.Fatalf("probe: %v %q %v", res, out, err)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("3 probes opened %d connections, want one each", n)
	}
}

func TestHTTP_18_HTTPSWithoutCertificateVerification(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("tls ok")) }))
	defer srv.Close()
	res, out, err := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Scheme: corev1.URISchemeHTTPS, Path: "/"}, time.Second)
	if res != Success || out != "tls ok" || err != nil {
		t.Fatalf("got %v %q %v", res, out, err)
	}
}

func TestHTTP_19_TimeoutCoversHeadersRedirectsAndBody(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/slow-headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/slow-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(200)
		_, _ = w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/hop/", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(60 * time.Millisecond)
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n+1), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	res, out, err := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/slow-headers"}, 150*time.Millisecond)
	if res != Failure || err != nil || !strings.Contains(out, "Client.Timeout exceeded") {
		t.Errorf("slow headers: %v %q %v", res, out, err)
	}
	// The kubelet returns a body read error as a probe error (retried, then dropped).
	res, _, err = probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/slow-body"}, 150*time.Millisecond)
	if res != Failure || err == nil {
		t.Errorf("slow body: %v %v, want a Failure with an error", res, err)
	}
	// 60 ms per hop, fewer than 10 hops: only the overall deadline can stop it.
	res, out, err = probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/hop/0"}, 250*time.Millisecond)
	if res != Failure || err != nil || !strings.Contains(out, "Client.Timeout exceeded") {
		t.Errorf("slow redirects: %v %q %v", res, out, err)
	}
}

func TestHTTP_20_StatusCodes(t *testing.T) {
	cases := []struct {
		code int
		want Result
		msg  string
	}{
		{200, Success, "body"},
		{204, Success, ""},
		{299, Success, "body"},
		{304, Warning, "Probe terminated redirects, Response body: "},
		{399, Warning, "Probe terminated redirects, Response body: body"},
		{400, Failure, "HTTP probe failed with statuscode: 400"},
		{404, Failure, "HTTP probe failed with statuscode: 404"},
		{500, Failure, "HTTP probe failed with statuscode: 500"},
		{503, Failure, "HTTP probe failed with statuscode: 503"},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte("body"))
			}))
			defer srv.Close()
			res, out, err := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/"}, time.Second)
			if res != tc.want || out != tc.msg || err != nil {
				t.Errorf("got %v %q %v, want %v %q", res, out, err, tc.want, tc.msg)
			}
		})
	}
}

func TestHTTP_20_21_RedirectToAnotherHostIsNotFollowedAndWarns(t *testing.T) {
	var followed atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Store(true) }))
	defer other.Close()
	_, port := hostPort(t, other.URL)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 127.0.0.1 -> localhost: another hostname, even though it is the same machine.
		http.Redirect(w, r, fmt.Sprintf("http://localhost:%d/", port), http.StatusMovedPermanently)
	}))
	defer srv.Close()
	res, out, err := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/"}, time.Second)
	if res != Warning || !strings.HasPrefix(out, "Probe terminated redirects") || err != nil {
		t.Errorf("got %v %q %v", res, out, err)
	}
	if followed.Load() {
		t.Error("redirect to another hostname was followed")
	}
}

func TestHTTP_21_SameHostRedirectsFollowedUpToTen(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("landed")) })
	mux.HandleFunc("/bad", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/fail", http.StatusFound) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	mux.HandleFunc("/loop/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/loop/"))
		http.Redirect(w, r, fmt.Sprintf("/loop/%d", n+1), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	if res, out, _ := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/start"}, time.Second); res != Success || out != "landed" {
		t.Errorf("followed redirect: %v %q", res, out)
	}
	if res, out, _ := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/bad"}, time.Second); res != Failure || out != "HTTP probe failed with statuscode: 500" {
		t.Errorf("redirect to a 500: %v %q", res, out)
	}
	res, out, err := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/loop/0"}, time.Second)
	if res != Failure || err != nil || !strings.Contains(out, "stopped after 10 redirects") {
		t.Errorf("redirect loop: %v %q %v", res, out, err)
	}
}

func TestHTTP_22_AtMost10KiBOfBodyRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
	}))
	defer srv.Close()
	res, out, err := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/"}, time.Second)
	if res != Success || err != nil || len(out) != 10*1024 {
		t.Errorf("got %v, %d bytes, %v; want success with 10240 bytes", res, len(out), err)
	}
}

func TestHTTP_23_TransportErrorIsFailureWithGoError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	_ = l.Close() // nothing listens there now
	res, out, err := probeHTTP(t, addr, corev1.HTTPGetAction{Path: "/"}, time.Second)
	if res != Failure || err != nil || !strings.Contains(out, "connect: connection refused") || !strings.HasPrefix(out, `Get "`+addr) {
		t.Errorf("got %v %q %v", res, out, err)
	}
}
