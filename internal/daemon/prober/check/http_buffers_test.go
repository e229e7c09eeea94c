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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The connection buffers are smaller than the kubelet's defaults: a request head and a response
// head larger than them must still go out and come back whole.
func TestHTTP_17_22_HeadsLargerThanConnectionBuffers(t *testing.T) {
	big := strings.Repeat("v", 4*connBufferSize)
	addr, heads := rawServer(t)
	a := corev1.HTTPGetAction{Path: "/", HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Big", Value: big}}}
	if res, _, err := probeHTTP(t, addr, a, time.Second); res != Success || err != nil {
		t.Fatalf("result %v, %v", res, err)
	}
	if h := heads()[0]; !strings.Contains(h, "X-Big: "+big+"\r\n") {
		t.Errorf("request head of %d bytes lacks the whole X-Big header", len(h))
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Big", big)
		_, _ = w.Write([]byte(strings.Repeat("b", 3*connBufferSize)))
	}))
	defer srv.Close()
	res, out, err := probeHTTP(t, srv.URL, corev1.HTTPGetAction{Path: "/"}, time.Second)
	if res != Success || err != nil || out != strings.Repeat("b", 3*connBufferSize) {
		t.Errorf("got %v, %d bytes, %v; want success with the whole body", res, len(out), err)
	}
}
