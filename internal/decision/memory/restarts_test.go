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

package memory

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// The memory keeps the restarts; the rules judge them (rules.Ineffective, rules.Tally): each
// failure reported here is judged and applied in turn, as decisions do.
func TestRestarts(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 300_000_000, time.UTC)
	w := rules.WorkloadKey{Namespace: "shop", Kind: "Deployment", Name: "web"}
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
		want     rules.RestartTally
	}{
		{name: "no failure after the restarts", tallyAt: t0.Add(time.Minute), window: 10 * time.Minute,
			want: rules.RestartTally{Requested: 2}},
		{name: "the new instance fails soon: ineffective once, however often it is reported",
			failures: []failure{
				{pod: "a", newID: "c://a-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(30 * time.Second), want: true},
				{pod: "a", newID: "c://a-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(40 * time.Second)},
			},
			tallyAt: t0.Add(time.Minute), window: 10 * time.Minute, want: rules.RestartTally{Requested: 2, Ineffective: 1}},
		{name: "a failure long after the start is a new sickness, not an ineffective restart",
			failures: []failure{{pod: "a", newID: "c://a-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(2*time.Second + soon + time.Second)}},
			tallyAt:  t0.Add(time.Minute), window: 10 * time.Minute, want: rules.RestartTally{Requested: 2}},
		{name: "the old instance still failing is not a new one",
			failures: []failure{{pod: "a", newID: "c://a-1", started: t0.Add(-time.Hour), failedAt: t0.Add(time.Second)}},
			tallyAt:  t0.Add(time.Minute), window: 10 * time.Minute, want: rules.RestartTally{Requested: 2}},
		{name: "an instance started before the request (second precision kept) is not the new one",
			failures: []failure{
				{pod: "a", newID: "c://a-x", started: t0.Add(-2 * time.Second), failedAt: t0.Add(time.Second)},
				{pod: "b", newID: "c://b-2", started: t0.Truncate(time.Second), failedAt: t0.Add(5 * time.Second), want: true},
			},
			tallyAt: t0.Add(time.Minute), window: 10 * time.Minute, want: rules.RestartTally{Requested: 2, Ineffective: 1}},
		{name: "a pod never restarted by us is not counted",
			failures: []failure{{pod: "z", newID: "c://z-2", started: t0, failedAt: t0.Add(time.Second)}},
			tallyAt:  t0.Add(time.Minute), window: 10 * time.Minute, want: rules.RestartTally{Requested: 2}},
		{name: "restarts age out of the window",
			failures: []failure{
				{pod: "a", newID: "c://a-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(10 * time.Second), want: true},
				{pod: "b", newID: "c://b-2", started: t0.Add(2 * time.Second), failedAt: t0.Add(10 * time.Second), want: true},
			},
			tallyAt: t0.Add(11 * time.Minute), window: 10 * time.Minute, want: rules.RestartTally{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newRestarts()
			// Both instances turned Failed a second before the request (the node's clock).
			o.requested(w, "a", "app", "c://a-1", t0.Add(-time.Second), soon, t0)
			o.requested(w, "b", "app", "c://b-1", t0.Add(-time.Second), soon, t0)
			for _, f := range tc.failures {
				found := rules.Ineffective(o.of(w), []rules.Refailure{{Pod: f.pod, Container: "app", ContainerID: f.newID,
					Started: f.started, FailedAt: f.failedAt}})
				if got := len(found) == 1; got != f.want {
					t.Errorf("failure of %s, %s found %v, want %v", f.pod, f.newID, found, f.want)
				}
				for _, id := range found {
					o.ineffective(w, id)
				}
			}
			if got := rules.Tally(o.of(w), nil, tc.window, tc.tallyAt); got != tc.want {
				t.Errorf("Tally = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRestarts_ForgetPodAndPrune(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	w := rules.WorkloadKey{Namespace: "shop", Kind: "Deployment", Name: "web"}
	o := newRestarts()
	o.requested(w, "a", "app", "c://a-1", t0, time.Minute, t0)
	o.requested(w, "b", "app", "c://b-1", t0, time.Minute, t0)
	o.ineffective(w, o.of(w)[0].RestartID)
	o.forgetPod("a")
	if got := rules.Tally(o.of(w), nil, time.Hour, t0.Add(time.Minute)); got != (rules.RestartTally{Requested: 1}) {
		t.Errorf("after forgetPod(a): Tally = %+v, want 1 requested, 0 ineffective", got)
	}
	o.forgetPod("b")
	if len(o.byWorkload)+len(o.workloadOf) != 0 {
		t.Errorf("a workload without restarts is still remembered: %v %v", o.byWorkload, o.workloadOf)
	}
	// A request more than a day after the last one drops the old ones.
	o.requested(w, "a", "app", "c://a-1", t0, time.Minute, t0)
	o.requested(w, "a", "app", "c://a-2", t0, time.Minute, t0.Add(25*time.Hour))
	if n := len(o.byWorkload[w]); n != 1 {
		t.Errorf("remembered %d restarts after a day, want 1", n)
	}
}
