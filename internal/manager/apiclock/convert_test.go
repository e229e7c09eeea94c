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
	"testing"
	"time"

	"github.com/go-logr/logr"
	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// measured returns a clock on local that measured the API server offset ahead of it, to within
// 10 ms + half a second.
func measured(local *clocktesting.FakePassiveClock, offset time.Duration) *Clock {
	c := New(local)
	now := local.Now()
	// The Date header has whole seconds: the API server's time is in [date, date+1s).
	c.Observe(now, now.Add(20*time.Millisecond), now.Add(10*time.Millisecond+offset-dateResolution/2))
	return c
}

func TestRead(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	local := clocktesting.NewFakePassiveClock(t0)
	if got := New(local).Read(); got != (Reading{Now: t0}) {
		t.Errorf("never measured: Read() = %+v, want the local clock", got)
	}
	c := measured(local, 2*time.Hour)
	want := Reading{Now: t0, Offset: 2 * time.Hour, Bound: 10*time.Millisecond + dateResolution/2, Known: true}
	if got := c.Read(); got != want {
		t.Errorf("measured: Read() = %+v, want %+v", got, want)
	}
	local.SetTime(t0.Add(MaxAge + time.Second))
	if got := c.Read(); got != (Reading{Now: local.Now()}) {
		t.Errorf("measured longer than MaxAge ago: Read() = %+v, want the local clock", got)
	}
}

// A time written on the API server's clock comes back on the reader's; one written by a replica
// whose clock ran ahead (further than both measures can be off) is taken as now.
func TestFromAPI(t *testing.T) {
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	known := Reading{Now: now, Offset: -2 * time.Hour, Bound: 300 * time.Millisecond, Known: true}
	unknown := Reading{Now: now}
	tolerance := 300*time.Millisecond + maxBound
	for _, tc := range []struct {
		name      string
		r         Reading
		t         time.Time // on the API server's clock
		wantLocal time.Time
		wantAhead time.Duration
	}{
		{"a past time, converted", known, now.Add(-2*time.Hour - time.Minute), now.Add(-time.Minute), 0},
		{"the API server's now is the reader's now", known, now.Add(-2 * time.Hour), now, 0},
		{"ahead within both error bounds: kept", known, now.Add(-2*time.Hour + tolerance), now.Add(tolerance), 0},
		{"ahead beyond them: now", known, now.Add(-2*time.Hour + tolerance + time.Millisecond), now, tolerance + time.Millisecond},
		{"written by a replica 2 h ahead", known, now, now, 2 * time.Hour},
		{"unmeasured: the local clock", unknown, now.Add(-time.Minute), now.Add(-time.Minute), 0},
		{"unmeasured: still clamped", unknown, now.Add(2 * time.Hour), now, 2 * time.Hour},
		{"the zero time stays zero", known, time.Time{}, time.Time{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, ahead := tc.r.FromAPI(tc.t)
			if !local.Equal(tc.wantLocal) || ahead != tc.wantAhead {
				t.Fatalf("FromAPI(%s) = %s, %s; want %s, %s", tc.t, local, ahead, tc.wantLocal, tc.wantAhead)
			}
			if ahead == 0 && !tc.r.ToAPI(local).Equal(tc.t) {
				t.Fatalf("ToAPI(FromAPI(%s)) = %s", tc.t, tc.r.ToAPI(local))
			}
		})
	}
}

// A deadline or an expiry moves with the past event it was set from.
func TestSpanFromAPI(t *testing.T) {
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	r := Reading{Now: now, Offset: time.Hour, Known: true}
	start, end, ahead := r.SpanFromAPI(now.Add(time.Hour-time.Minute), now.Add(time.Hour+9*time.Minute))
	if !start.Equal(now.Add(-time.Minute)) || !end.Equal(now.Add(9*time.Minute)) || ahead != 0 {
		t.Errorf("a past start: %s, %s, %s", start, end, ahead)
	}
	start, end, ahead = r.SpanFromAPI(now.Add(3*time.Hour), now.Add(3*time.Hour+10*time.Minute))
	if !start.Equal(now) || !end.Equal(now.Add(10*time.Minute)) || ahead != 2*time.Hour {
		t.Errorf("a start 2 h ahead: %s, %s, %s; want now, now+10m, 2h", start, end, ahead)
	}
	if _, end, _ := r.SpanFromAPI(now, time.Time{}); !end.IsZero() {
		t.Errorf("a zero end: %s", end)
	}
}

// Each entry clamped counts once, for the policy; expires keeps its distance from the time.
func TestLocalEvictions(t *testing.T) {
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	r := Reading{Now: now, Offset: time.Hour, Known: true}
	entry := func(pod string, at time.Time) policyv1alpha1.RecentEviction {
		return policyv1alpha1.RecentEviction{Pod: pod, Time: metav1.NewTime(at), Expires: metav1.NewTime(at.Add(10 * time.Minute))}
	}
	in := []policyv1alpha1.RecentEviction{entry("past", now.Add(time.Hour-time.Minute)), entry("ahead", now.Add(3*time.Hour))}
	before := promtestutil.ToFloat64(futureClamped.WithLabelValues(ObjectPolicy))
	got := r.LocalEvictions(logr.Discard(), "shop/move", in)
	if n := promtestutil.ToFloat64(futureClamped.WithLabelValues(ObjectPolicy)) - before; n != 1 {
		t.Errorf("clamps counted: %v, want 1", n)
	}
	want := []policyv1alpha1.RecentEviction{entry("past", now.Add(-time.Minute)), entry("ahead", now)}
	for i := range want {
		if !got[i].Time.Equal(&want[i].Time) || !got[i].Expires.Equal(&want[i].Expires) {
			t.Errorf("entry %s: %s..%s, want %s..%s", want[i].Pod, got[i].Time, got[i].Expires, want[i].Time, want[i].Expires)
		}
	}
	if !in[1].Time.Equal(ptr(metav1.NewTime(now.Add(3 * time.Hour)))) {
		t.Error("the list read was changed")
	}
	back := r.APIEvictions(got)
	if !back[0].Time.Equal(&in[0].Time) || !back[1].Time.Equal(ptr(metav1.NewTime(now.Add(time.Hour)))) {
		t.Errorf("APIEvictions: %s, %s; want %s, %s", back[0].Time, back[1].Time, in[0].Time, now.Add(time.Hour))
	}
}

func ptr[T any](v T) *T { return &v }
