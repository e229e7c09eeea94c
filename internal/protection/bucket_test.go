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

package protection

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestTokenBucket(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := Governing{{Key: PolicyKey{Namespace: "ns", Name: "p"}, Rate: Rate{PerMinute: 6, Burst: 3}}}
	type step struct {
		advance  time.Duration
		wantOK   bool
		wantWait time.Duration
	}
	cases := []struct {
		name   string
		global Rate
		steps  []step
	}{
		{"burst then one per interval", Rate{}, []step{
			{0, true, 0}, {0, true, 0}, {0, true, 0}, // burst of 3
			{0, false, 10 * time.Second}, // 6/min = one every 10s
			{4 * time.Second, false, 6 * time.Second},
			{6 * time.Second, true, 0},
			{0, false, 10 * time.Second},
		}},
		{"refills while idle, capped at burst", Rate{}, []step{
			{0, true, 0}, {0, true, 0}, {0, true, 0},
			{10 * time.Minute, true, 0}, {0, true, 0}, {0, true, 0},
			{0, false, 10 * time.Second},
		}},
		{"global bucket is stricter", Rate{PerMinute: 1, Burst: 1}, []step{
			{0, true, 0},
			{0, false, time.Minute},
			{30 * time.Second, false, 30 * time.Second},
			{30 * time.Second, true, 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			l := NewLimiter(clk, c.global)
			for i, s := range c.steps {
				clk.SetTime(clk.Now().Add(s.advance))
				_, ok, wait := l.Take(p)
				if ok != s.wantOK || wait != s.wantWait {
					t.Fatalf("step %d: got (%v, %s), want (%v, %s)", i, ok, wait, s.wantOK, s.wantWait)
				}
			}
		})
	}
}

func TestLimiterAllOrNothing(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := NewLimiter(clk, Rate{})
	a := Policy{Key: PolicyKey{Namespace: "ns", Name: "a"}, Rate: Rate{PerMinute: 60, Burst: 5}}
	b := Policy{Key: PolicyKey{Namespace: "ns", Name: "b"}, Rate: Rate{PerMinute: 60, Burst: 1}}
	if _, ok, _ := l.Take(Governing{a, b}); !ok {
		t.Fatal("first take must succeed")
	}
	if _, ok, wait := l.Take(Governing{a, b}); ok || wait != time.Second {
		t.Fatalf("b is empty: got %v %s", ok, wait)
	}
	// The failed take must not have consumed a's token: 4 left.
	if got := l.Tokens(PolicyKey{Namespace: "ns", Name: "a"}); got != 4 {
		t.Fatalf("a has %v tokens, want 4", got)
	}
	// A rate change keeps the tokens, capped at the new burst.
	a.Rate = Rate{PerMinute: 60, Burst: 2}
	if _, ok, _ := l.Take(Governing{a}); !ok {
		t.Fatal("a still has tokens")
	}
	if got := l.Tokens(PolicyKey{Namespace: "ns", Name: "a"}); got != 1 {
		t.Fatalf("a has %v tokens after rate change, want 1", got)
	}
	l.Forget(PolicyKey{Namespace: "ns", Name: "a"})
	if got := l.Tokens(PolicyKey{Namespace: "ns", Name: "a"}); got != -1 {
		t.Fatalf("forgotten bucket still there: %v", got)
	}
}

// A token is spent only when the restart is created: a create that fails gives it back, to every
// bucket it was taken from, never beyond the burst.
func TestReservationCancelGivesTokensBack(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := NewLimiter(clk, Rate{PerMinute: 60, Burst: 2})
	a := Policy{Key: PolicyKey{Namespace: "ns", Name: "a"}, Rate: Rate{PerMinute: 6, Burst: 1}}
	r, ok, _ := l.Take(Governing{a})
	if !ok {
		t.Fatal("first take must succeed")
	}
	if _, ok, _ := l.Take(Governing{a}); ok {
		t.Fatal("a's bucket is empty")
	}
	r.Cancel() // the create was refused
	if got := l.Tokens(a.Key); got != 1 {
		t.Fatalf("a has %v tokens after cancel, want 1", got)
	}
	if got := l.global.Tokens(clk.Now()); got != 2 {
		t.Fatalf("global bucket has %v tokens after cancel, want 2", got)
	}
	r.Cancel() // twice is a no-op
	if got := l.Tokens(a.Key); got != 1 {
		t.Fatalf("a has %v tokens after a second cancel, want 1 (capped at burst)", got)
	}
	var none *Reservation
	none.Cancel()
}

// The default policy's bucket is per namespace: one namespace's failures cannot use up another's.
func TestDefaultPolicyBucketPerNamespace(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := NewLimiter(clk, Rate{})
	def := DefaultPolicy(Defaults{MaxUnavailable: intstr.FromInt32(1), MaxFailing: intstr.FromInt32(1), RestartsPerMinute: 1, Burst: 1})
	noisy := Governing(Select(nil, def, "noisy", nil))
	quiet := Governing(Select(nil, def, "quiet", nil))
	if noisy[0].Key == quiet[0].Key || !noisy[0].IsDefault() || noisy[0].Key.String() != "noisy/<default>" {
		t.Fatalf("default keys: %v %v", noisy[0].Key, quiet[0].Key)
	}
	if _, ok, _ := l.Take(noisy); !ok {
		t.Fatal("noisy's first restart")
	}
	if _, ok, _ := l.Take(noisy); ok {
		t.Fatal("noisy's bucket is empty")
	}
	if _, ok, _ := l.Take(quiet); !ok {
		t.Fatal("quiet has a bucket of its own")
	}
}
