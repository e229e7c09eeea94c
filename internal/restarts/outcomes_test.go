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

package restarts

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/protection"
)

func TestOutcomes(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 300_000_000, time.UTC)
	w := protection.WorkloadKey{Namespace: "shop", Kind: "Deployment", Name: "web"}
	const soon = 60 * time.Second
	type failure struct {
		pod               types.UID
		newID             string
		started, failedAt time.Time
		want              bool
	}
	cases := []struct {
		name     string
		failures []failure
		tallyAt  time.Time
		window   time.Duration
		want     protection.RestartTally
	}{
		{name: "no failure after the restarts", tallyAt: t0.Add(time.Minute), window: 10 * time.Minute,
			want: protection.RestartTally{Requested: 2}},
		{name: "the new instance fails soon: ineffective once, however often it is reported",
			failures: []failure{
				{pod: "a", newID: "c://a-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(30 * time.Second), want: true},
				{pod: "a", newID: "c://a-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(40 * time.Second)},
			},
			tallyAt: t0.Add(time.Minute), window: 10 * time.Minute, want: protection.RestartTally{Requested: 2, Ineffective: 1}},
		{name: "a failure long after the start is a new sickness, not an ineffective restart",
			failures: []failure{{pod: "a", newID: "c://a-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(2*time.Second + soon + time.Second)}},
			tallyAt:  t0.Add(time.Minute), window: 10 * time.Minute, want: protection.RestartTally{Requested: 2}},
		{name: "the old instance still failing is not a new one",
			failures: []failure{{pod: "a", newID: "c://a-1", started: t0.Add(-time.Hour), failedAt: t0.Add(time.Second)}},
			tallyAt:  t0.Add(time.Minute), window: 10 * time.Minute, want: protection.RestartTally{Requested: 2}},
		{name: "an instance started before the request (second precision kept) is not the new one",
			failures: []failure{
				{pod: "a", newID: "c://a-x", started: t0.Add(-2 * time.Second), failedAt: t0.Add(time.Second)},
				{pod: "b", newID: "c://b-2", started: t0.Truncate(time.Second), failedAt: t0.Add(5 * time.Second), want: true},
			},
			tallyAt: t0.Add(time.Minute), window: 10 * time.Minute, want: protection.RestartTally{Requested: 2, Ineffective: 1}},
		{name: "a pod never restarted by us is not counted",
			failures: []failure{{pod: "z", newID: "c://z-2", started: t0, failedAt: t0.Add(time.Second)}},
			tallyAt:  t0.Add(time.Minute), window: 10 * time.Minute, want: protection.RestartTally{Requested: 2}},
		{name: "restarts age out of the window",
			failures: []failure{
				{pod: "a", newID: "c://a-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(10 * time.Second), want: true},
				{pod: "b", newID: "c://b-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(10 * time.Second), want: true},
			},
			tallyAt: t0.Add(11 * time.Minute), window: 10 * time.Minute, want: protection.RestartTally{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOutcomes()
			o.Requested(w, "a", "app", "c://a-1", soon, t0)
			o.Requested(w, "b", "app", "c://b-1", soon, t0)
			for _, f := range tc.failures {
				if got := o.Failed(w, f.pod, "app", f.newID, f.started, f.failedAt); got != f.want {
					t.Errorf("Failed(%s, %s) = %v, want %v", f.pod, f.newID, got, f.want)
				}
			}
			if got := o.Tally(w, tc.window, tc.tallyAt); got != tc.want {
				t.Errorf("Tally = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOutcomes_ForgetPodAndPrune(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	w := protection.WorkloadKey{Namespace: "shop", Kind: "Deployment", Name: "web"}
	o := NewOutcomes()
	o.Requested(w, "a", "app", "c://a-1", time.Minute, t0)
	o.Requested(w, "b", "app", "c://b-1", time.Minute, t0)
	o.Failed(w, "a", "app", "c://a-2", t0.Add(time.Second), t0.Add(5*time.Second))
	o.ForgetPod(w, "a")
	if got := o.Tally(w, time.Hour, t0.Add(time.Minute)); got != (protection.RestartTally{Requested: 1}) {
		t.Errorf("after ForgetPod(a): Tally = %+v, want 1 requested, 0 ineffective", got)
	}
	o.ForgetPod(w, "b")
	if len(o.byWorkload) != 0 {
		t.Errorf("a workload without restarts is still remembered: %v", o.byWorkload)
	}
	// A request more than a day after the last one drops the old ones.
	o.Requested(w, "a", "app", "c://a-1", time.Minute, t0)
	o.Requested(w, "a", "app", "c://a-2", time.Minute, t0.Add(25*time.Hour))
	if n := len(o.byWorkload[w]); n != 1 {
		t.Errorf("remembered %d restarts after a day, want 1", n)
	}
}
