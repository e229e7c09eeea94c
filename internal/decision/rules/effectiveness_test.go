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

package rules

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

func TestCompileBreaker(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      policyv1alpha1.RestartEffectiveness
		want    RestartBreaker
		wantErr string
	}{
		{name: "defaults", want: DefaultRestartBreaker},
		{name: "disabled", in: policyv1alpha1.RestartEffectiveness{Mode: policyv1alpha1.BreakerDisabled},
			want: RestartBreaker{MinIneffective: 2, Window: 10 * time.Minute}},
		{name: "set", in: policyv1alpha1.RestartEffectiveness{MinIneffective: 3, Window: &metav1.Duration{Duration: time.Hour}},
			want: RestartBreaker{Enabled: true, MinIneffective: 3, Window: time.Hour}},
		{name: "bad mode", in: policyv1alpha1.RestartEffectiveness{Mode: "Sometimes"}, wantErr: "spec.restartEffectiveness.mode: must be Enforce or Disabled"},
		{name: "window too short", in: policyv1alpha1.RestartEffectiveness{Window: &metav1.Duration{Duration: time.Second}},
			wantErr: "spec.restartEffectiveness.window: must be between 1m and 24h, got 1s"},
		{name: "minIneffective 0 is unset", in: policyv1alpha1.RestartEffectiveness{MinIneffective: 0}, want: DefaultRestartBreaker},
		{name: "Evict", in: policyv1alpha1.RestartEffectiveness{Action: policyv1alpha1.IneffectiveEvict},
			want: RestartBreaker{Enabled: true, MinIneffective: 2, Window: 10 * time.Minute, Evict: true}},
		{name: "Hold", in: policyv1alpha1.RestartEffectiveness{Action: policyv1alpha1.IneffectiveHold}, want: DefaultRestartBreaker},
		{name: "Evict with the breaker disabled",
			in:      policyv1alpha1.RestartEffectiveness{Mode: policyv1alpha1.BreakerDisabled, Action: policyv1alpha1.IneffectiveEvict},
			wantErr: `spec.restartEffectiveness.action: Evict needs mode Enforce, got mode "Disabled"`},
		{name: "bad action", in: policyv1alpha1.RestartEffectiveness{Action: "Delete"},
			wantErr: `spec.restartEffectiveness.action: must be Hold or Evict, got "Delete"`},
		{name: "minIneffective negative", in: policyv1alpha1.RestartEffectiveness{MinIneffective: -1},
			wantErr: "spec.restartEffectiveness.minIneffective: must be from 1 to 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := compileBreaker(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestRestartBreaker(t *testing.T) {
	strict := Policy{Key: PolicyKey{Namespace: "ns", Name: "strict"}, Breaker: RestartBreaker{Enabled: true, MinIneffective: 1, Window: time.Minute}}
	loose := Policy{Key: PolicyKey{Namespace: "ns", Name: "loose"}, Breaker: RestartBreaker{Enabled: true, MinIneffective: 3, Window: time.Hour}}
	off := Policy{Key: PolicyKey{Namespace: "ns", Name: "off"}, Breaker: RestartBreaker{MinIneffective: 1}}
	b, by := Governing{loose, strict, off}.RestartBreaker()
	if !b.Enabled || b.MinIneffective != 1 || b.Window != time.Hour || by != strict.Key {
		t.Fatalf("combined breaker %+v by %v: the most restrictive of the enabled ones", b, by)
	}
	if b, _ := (Governing{off}).RestartBreaker(); b.Enabled {
		t.Fatal("a disabled breaker alone is off")
	}
	def := DefaultRestartBreaker
	for _, tc := range []struct {
		tally RestartTally
		want  bool
	}{
		{RestartTally{Requested: 1, Ineffective: 1}, false}, // one is not yet a pattern
		{RestartTally{Requested: 2, Ineffective: 2}, true},
		{RestartTally{Requested: 4, Ineffective: 2}, false}, // half helped
		{RestartTally{Requested: 5, Ineffective: 3}, true},
	} {
		if got := def.Tripped(tc.tally); got != tc.want {
			t.Errorf("Tripped(%+v) = %v, want %v", tc.tally, got, tc.want)
		}
	}
	if (RestartBreaker{MinIneffective: 1}).Tripped(RestartTally{Requested: 9, Ineffective: 9}) {
		t.Error("a disabled breaker never trips")
	}
	if got := SoonAfterRestart(5, 3, 10); got != 65*time.Second {
		t.Errorf("SoonAfterRestart = %v", got)
	}
	if got := SoonAfterRestart(0, 0, 0); got != 60*time.Second {
		t.Errorf("SoonAfterRestart of an unset period and threshold = %v, want the API defaults' 60s", got)
	}
}

// The breaker judges each pod first: a lemon pod whose restarts keep failing again is held alone;
// its siblings' first hangs are restarted; restarts that did not help in two pods hold the
// workload.
func TestIneffectivePerPodFirst(t *testing.T) {
	lemon := func(n, ineffective int, pod types.UID) []RestartRecord {
		out := make([]RestartRecord, n)
		for i := range out {
			out[i] = RestartRecord{RestartID: RestartID{Pod: pod, Container: "app", Instance: fmt.Sprint("c-", i), At: t0.Add(-time.Duration(n-i) * time.Minute)},
				Ineffective: i < ineffective}
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		self     types.UID
		restarts []RestartRecord
		outcome  Outcome
		message  string
	}{
		{"the lemon pod, restarted twice and failing again each time, is held", "lemon", lemon(2, 2, "lemon"), Hold, "restarts of pod web-0"},
		{"a sibling's first hang is restarted", "pod-0", lemon(2, 2, "lemon"), Restart, ""},
		{"a sibling's first hang beside a lemon with many restarts", "pod-0", lemon(5, 5, "lemon"), Restart, ""},
		{"restarts that did not help in two pods hold the workload", "pod-0", append(lemon(1, 1, "a"), lemon(1, 1, "b")...), Hold,
			"2 of the last 2 restarts of Deployment/web"},
		{"the lemon pod's one helpful restart in three", "lemon", lemon(3, 1, "lemon"), Restart, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, x := baseFacts()
			f.UID = tc.self
			m := newFakeMemory()
			m.restarts = tc.restarts
			d := Decide(f, x, m)
			if d.Outcome != tc.outcome || (tc.outcome == Hold && (d.Reason != policyv1alpha1.HoldRestartIneffective || !strings.Contains(d.Message, tc.message))) {
				t.Fatalf("got %s %s (%s), want %s %q", d.Outcome, d.Reason, d.Message, tc.outcome, tc.message)
			}
		})
	}
}

// Whether a restart helped is judged on the node's clock only: the new instance's start against
// when the stopped one turned Failed, never against the manager's time of the request.
func TestIneffectiveJudgedOnTheNodesClock(t *testing.T) {
	request := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC) // the manager's clock
	for _, tc := range []struct {
		name string
		skew time.Duration // the node's clock minus the manager's
	}{
		{"node in step", 0},
		{"node 10 minutes behind", -10 * time.Minute},
		{"node 10 minutes ahead", 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			onNode := func(d time.Duration) time.Time { return request.Add(tc.skew + d) }
			restarts := []RestartRecord{{
				RestartID: RestartID{Pod: "p", Container: "app", Instance: "c://old", At: request},
				Soon:      time.Minute, InstanceFailed: onNode(-time.Second),
			}}
			// The new instance started 3 s after the request and failed 5 s later.
			found := Ineffective(restarts, []Refailure{{Pod: "p", Container: "app", ContainerID: "c://new",
				Started: onNode(3 * time.Second), FailedAt: onNode(8 * time.Second)}})
			if len(found) != 1 {
				t.Errorf("the restart that did not help was not found: %v", found)
			}
			// An instance that started before the old one failed is not its successor.
			found = Ineffective(restarts, []Refailure{{Pod: "p", Container: "app", ContainerID: "c://other",
				Started: onNode(-3 * time.Second), FailedAt: onNode(8 * time.Second)}})
			if len(found) != 0 {
				t.Errorf("an instance older than the failure was taken for the restarted one: %v", found)
			}
		})
	}
}
