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

package figures

import (
	"cmp"
	"fmt"
	"testing"
	"time"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

var t0 = time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kubelet time.Time
		v       Verdict
		want    Figure
	}{
		{"held: avoided with its reason", t0, Verdict{Reason: policyv1alpha1.HoldFailureStorm, At: t0.Add(time.Second)},
			Figure{Kind: Avoided, Reason: policyv1alpha1.HoldFailureStorm}},
		{"restarted later: agreed, the time added", t0, Verdict{Restart: true, At: t0.Add(1500 * time.Millisecond)},
			Figure{Kind: Agreed, Added: 1500 * time.Millisecond}},
		{"restarted at the same moment: nothing added", t0, Verdict{Restart: true, At: t0}, Figure{Kind: Agreed}},
		{"the engine first (clocks apart): nothing added, never negative", t0, Verdict{Restart: true, At: t0.Add(-time.Second)},
			Figure{Kind: Agreed}},
		{"no threshold moment known: nothing added", time.Time{}, Verdict{Restart: true, At: t0}, Figure{Kind: Agreed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.kubelet, tc.v); got != tc.want {
				t.Errorf("Classify() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestShadowVerdict(t *testing.T) {
	if v := ShadowVerdict(policyv1alpha1.HoldShadow, t0); !v.Restart || v.At != t0 {
		t.Errorf("a Shadow hold is the engine's restart, got %+v", v)
	}
	if v := ShadowVerdict(policyv1alpha1.HoldMaxUnavailable, t0); v.Restart || v.Reason != policyv1alpha1.HoldMaxUnavailable {
		t.Errorf("another hold is the engine's hold, got %+v", v)
	}
}

// step is one thing a ledger is told, and what it must answer.
type step struct {
	enforce *Verdict // Enforce decision
	shadow  *Verdict // Shadow verdict
	running string   // the instance of the container running now (Shadow)
	key     Key
	want    Figure
	wantNew bool
	wantTag string // when not this step's own
}

var (
	a = Key{Pod: "uid-a", Container: "app", ContainerID: "c1"}
	b = Key{Pod: "uid-b", Container: "app", ContainerID: "c1"}
)

func held(r policyv1alpha1.HoldReason) *Verdict { return &Verdict{Reason: r, At: t0} }
func restartAt(d time.Duration) *Verdict        { return &Verdict{Restart: true, At: t0.Add(d)} }

func TestLedger(t *testing.T) {
	storm := policyv1alpha1.HoldFailureStorm
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"Enforce: a hold decided again counts once", []step{
			{enforce: held(storm), key: a, want: Figure{Kind: Avoided, Reason: storm}, wantNew: true},
			{enforce: held(storm), key: a},
			{enforce: held(policyv1alpha1.HoldMaxUnavailable), key: a},
			{enforce: held(storm), key: b, want: Figure{Kind: Avoided, Reason: storm}, wantNew: true},
		}},
		{"Enforce: a restart counts once, with its added time", []step{
			{enforce: restartAt(2 * time.Second), key: a, want: Figure{Kind: Agreed, Added: 2 * time.Second}, wantNew: true},
			{enforce: restartAt(3 * time.Second), key: a},
			{enforce: held(storm), key: a},
		}},
		{"Enforce: a hold released later counts the restart and the time the hold added", []step{
			{enforce: held(storm), key: a, want: Figure{Kind: Avoided, Reason: storm}, wantNew: true},
			{enforce: restartAt(time.Minute), key: a, want: Figure{Kind: Agreed, Added: time.Minute}, wantNew: true},
		}},
		{"Shadow: the kubelet's restart of a held failure is avoided, once", []step{
			{running: "c1", key: a},
			{shadow: held(storm), key: a},
			{running: "c1", key: a},
			{running: "", key: a},
			{running: "c2", key: a, want: Figure{Kind: Avoided, Reason: storm}, wantNew: true, wantTag: "step 1"},
			{running: "c3", key: a},
			{shadow: held(storm), key: a},
		}},
		{"Shadow: the first would-restart keeps its time", []step{
			{shadow: restartAt(time.Second), key: a},
			{shadow: restartAt(5 * time.Second), key: a},
			{running: "c2", key: a, want: Figure{Kind: Agreed, Added: time.Second}, wantNew: true, wantTag: "step 1"},
		}},
		{"Shadow: the latest verdict before the kubelet's restart counts", []step{
			{shadow: held(storm), key: a},
			{shadow: restartAt(2 * time.Second), key: a},
			{running: "c2", key: a, want: Figure{Kind: Agreed, Added: 2 * time.Second}, wantNew: true, wantTag: "step 1"},
		}},
		{"Shadow: another container's or pod's new instance is no restart of this one", []step{
			{shadow: held(storm), key: a},
			{running: "c2", key: Key{Pod: a.Pod, Container: "sidecar"}},
			{running: "c2", key: b},
			{running: "c2", key: a, want: Figure{Kind: Avoided, Reason: storm}, wantNew: true, wantTag: "step 0"},
		}},
		{"Shadow: a restart the engine saw no failure of is not counted", []step{
			{running: "c2", key: a},
			{running: "c3", key: a},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger[string](0)
			for i, s := range tc.steps {
				var got Counted[string]
				var ok bool
				tag := fmt.Sprintf("step %d", i)
				switch {
				case s.enforce != nil:
					got, ok = l.Enforce(s.key, t0, *s.enforce, tag)
				case s.shadow != nil:
					got, ok = l.ShadowVerdict(s.key, t0, *s.shadow, tag)
				default:
					if figs := l.Running(s.key.Pod, s.key.Container, s.running); len(figs) > 0 {
						got, ok = figs[0], true
						if len(figs) > 1 {
							t.Fatalf("step %d: %d figures for one instance: %+v", i, len(figs), figs)
						}
					}
				}
				if ok != s.wantNew || got.Figure != s.want {
					t.Fatalf("step %d: got %+v, %v; want %+v, %v", i, got.Figure, ok, s.want, s.wantNew)
				}
				// The instance's tag is the one its last verdict gave.
				if want := cmp.Or(s.wantTag, tag); ok && got.Tag != want {
					t.Fatalf("step %d: tag %q, want %q", i, got.Tag, want)
				}
			}
		})
	}
}

func TestLedgerBounded(t *testing.T) {
	l := NewLedger[struct{}](2)
	for _, id := range []string{"c1", "c2", "c3"} {
		l.Enforce(Key{Pod: "uid", Container: "app", ContainerID: id}, t0, *held(policyv1alpha1.HoldFailureStorm), struct{}{})
	}
	if l.Len() != 2 {
		t.Fatalf("Len() = %d, want 2", l.Len())
	}
	// The oldest was forgotten: its hold counts again, the newest does not.
	if _, ok := l.Enforce(Key{Pod: "uid", Container: "app", ContainerID: "c3"}, t0, *held(policyv1alpha1.HoldFailureStorm), struct{}{}); ok {
		t.Error("the newest instance was forgotten")
	}
	if _, ok := l.Enforce(Key{Pod: "uid", Container: "app", ContainerID: "c1"}, t0, *held(policyv1alpha1.HoldFailureStorm), struct{}{}); !ok {
		t.Error("the oldest instance was kept past the ledger's size")
	}
}
