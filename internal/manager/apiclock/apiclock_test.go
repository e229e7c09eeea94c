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

package apiclock

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestObserve(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		samples    [][3]time.Duration // sent, received (after t0 on the local clock), the API server's Date (after t0)
		wantOffset time.Duration
		known      bool
	}{
		{"none", nil, 0, false},
		{"the API server 6 minutes ahead", [][3]time.Duration{{0, 40 * time.Millisecond, 6 * time.Minute}},
			6*time.Minute + 500*time.Millisecond - 20*time.Millisecond, true},
		{"the API server 6 minutes behind", [][3]time.Duration{{0, 40 * time.Millisecond, -6 * time.Minute}},
			-6*time.Minute + 500*time.Millisecond - 20*time.Millisecond, true},
		{"a slow response is no sample", [][3]time.Duration{{0, 3 * time.Second, time.Minute}}, 0, false},
		{"a less precise sample does not replace a recent one", [][3]time.Duration{
			{0, 20 * time.Millisecond, time.Minute}, {time.Second, 2 * time.Second, 2 * time.Minute}},
			time.Minute + 500*time.Millisecond - 10*time.Millisecond, true},
		{"but replaces one older than a minute", [][3]time.Duration{
			{0, 20 * time.Millisecond, time.Minute}, {61 * time.Second, 62 * time.Second, 2 * time.Minute}},
			2*time.Minute + 500*time.Millisecond - 61500*time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local := clocktesting.NewFakePassiveClock(t0)
			c := New(local)
			for _, s := range tc.samples {
				c.Observe(t0.Add(s[0]), t0.Add(s[1]), t0.Add(s[2]))
			}
			local.SetTime(t0.Add(time.Minute + 2*time.Second))
			got, known := c.Offset()
			if got != tc.wantOffset || known != tc.known {
				t.Fatalf("Offset() = %v, %v; want %v, %v", got, known, tc.wantOffset, tc.known)
			}
			if want := local.Now().Add(tc.wantOffset); !c.Now().Equal(want) {
				t.Fatalf("Now() = %v, want %v", c.Now(), want)
			}
		})
	}
}

func TestOffsetExpires(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	local := clocktesting.NewFakePassiveClock(t0)
	c := New(local)
	c.Observe(t0, t0.Add(10*time.Millisecond), t0)
	local.SetTime(t0.Add(MaxAge + time.Second))
	if _, known := c.Offset(); known {
		t.Fatal("an offset measured longer than MaxAge ago is still known")
	}
}

// Every response through the wrapped transport is a sample.
func TestWrapMeasuresResponses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Date", time.Now().Add(-6*time.Minute).UTC().Format(http.TimeFormat))
	}))
	defer srv.Close()
	c := New(nil)
	resp, err := (&http.Client{Transport: c.Wrap(http.DefaultTransport)}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	got, known := c.Offset()
	if !known || got > -6*time.Minute+2*time.Second || got < -6*time.Minute-2*time.Second {
		t.Fatalf("Offset() = %v, %v; want about -6m", got, known)
	}
}
