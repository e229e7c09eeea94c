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

// Package engine holds per-probe Go benchmarks of our HTTP prober and the kubelet's, against
// the same loopback server; cmd/enginebench measures the whole engine with thousands of workers.
package engine

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	khttp "k8s.io/kubernetes/pkg/probe/http"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/httpget"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober/check"
)

func server(b *testing.B) (string, *corev1.HTTPGetAction) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	b.Cleanup(srv.Close)
	host, p, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	port, _ := strconv.Atoi(p)
	return host, &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(int32(port))}
}

// BenchmarkHTTPProbe builds a request and runs one probe per iteration, as a worker does per period.
func BenchmarkHTTPProbe(b *testing.B) {
	c := &corev1.Container{Name: "app"}
	b.Run("ours", func(b *testing.B) {
		host, a := server(b)
		p := check.NewHTTP()
		b.ReportAllocs()
		for b.Loop() {
			req, err := httpget.NewRequest(a, c, host, "kube-probe/1.37")
			if err != nil {
				b.Fatal(err)
			}
			if o, err := p.Probe(req, time.Second); o.Result != check.Success {
				b.Fatal(o, err)
			}
		}
	})
	b.Run("kubelet", func(b *testing.B) {
		host, a := server(b)
		p := khttp.New(false)
		b.ReportAllocs()
		for b.Loop() {
			req, err := khttp.NewRequestForHTTPGetAction(a, c, host, "probe")
			if err != nil {
				b.Fatal(err)
			}
			if res, out, err := p.Probe(req, time.Second); res != "success" {
				b.Fatal(res, out, err)
			}
		}
	})
}
