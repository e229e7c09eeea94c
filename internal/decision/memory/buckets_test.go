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

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

func TestTokenBucket(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := rules.Governing{{Key: rules.PolicyKey{Namespace: "ns", Name: "p"}, Rate: rules.Rate{PerMinute: 6, Burst: 3}}}
	type step struct {
		advance  time.Duration
		wantOK   bool
		wantWait time.Duration
	}
	cases := []struct {
		name   string
		global rules.Rate
		steps  []step
	}{
		{"burst then one per interval", rules.Rate{}, []step{
			{0, true, 0}, {0, true, 0}, {0, true, 0}, // burst of 3
			{0, false, 10 * time.Second}, // 6/min = one every 10s
			{4 * time.Second, false, 6 * time.Second},
			{6 * time.Second, true, 0},
			{0, false, 10 * time.Second},
		}},
		{"refills while idle, capped at burst", rules.Rate{}, []step{
			{0, true, 0}, {0, true, 0}, {0, true, 0},
			{10 * time.Minute, true, 0}, {0, true, 0}, {0, true, 0},
			{0, false, 10 * time.Second},
		}},
		{"global bucket is stricter", rules.Rate{PerMinute: 1, Burst: 1}, []step{
			{0, true, 0},
			{0, false, time.Minute},
			{30 * time.Second, false, 30 * time.Second},
			{30 * time.Second, true, 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := start
			l := newBuckets(c.global, now)
			for i, s := range c.steps {
				now = now.Add(s.advance)
				// wait only reads: it says what take does.
				if w := l.wait("ns", p, now); w != s.wantWait {
					t.Fatalf("step %d: wait %s, want %s", i, w, s.wantWait)
				}
				ok, wait := l.take("ns", p, now)
				if ok != s.wantOK || wait != s.wantWait {
					t.Fatalf("step %d: got (%v, %s), want (%v, %s)", i, ok, wait, s.wantOK, s.wantWait)
				}
			}
		})
	}
}

func TestBucketsAllOrNothing(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newBuckets(rules.Rate{}, now)
	a := rules.Policy{Key: rules.PolicyKey{Namespace: "ns", Name: "a"}, Rate: rules.Rate{PerMinute: 60, Burst: 5}}
	b := rules.Policy{Key: rules.PolicyKey{Namespace: "ns", Name: "b"}, Rate: rules.Rate{PerMinute: 60, Burst: 1}}
	if ok, _ := l.take("ns", rules.Governing{a, b}, now); !ok {
		t.Fatal("first take must succeed")
	}
	if ok, wait := l.take("ns", rules.Governing{a, b}, now); ok || wait != time.Second {
		t.Fatalf("b is empty: got %v %s", ok, wait)
	}
	// The failed take must not have consumed a's token: 4 left.
	if got := l.tokens(rules.PolicyKey{Namespace: "ns", Name: "a"}, now); got != 4 {
		t.Fatalf("a has %v tokens, want 4", got)
	}
	// A rate change keeps the tokens, capped at the new burst.
	a.Rate = rules.Rate{PerMinute: 60, Burst: 2}
	if ok, _ := l.take("ns", rules.Governing{a}, now); !ok {
		t.Fatal("a still has tokens")
	}
	if got := l.tokens(rules.PolicyKey{Namespace: "ns", Name: "a"}, now); got != 1 {
		t.Fatalf("a has %v tokens after rate change, want 1", got)
	}
	l.forget(rules.PolicyKey{Namespace: "ns", Name: "a"})
	if got := l.tokens(rules.PolicyKey{Namespace: "ns", Name: "a"}, now); got != -1 {
		t.Fatalf("forgotten bucket still there: %v", got)
	}
}

// A token is spent only when the restart is created: a create that fails gives it back, to every
// bucket it was taken from, never beyond the burst.
func TestGiveBack(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newBuckets(rules.Rate{PerMinute: 60, Burst: 2}, now)
	a := rules.Policy{Key: rules.PolicyKey{Namespace: "ns", Name: "a"}, Rate: rules.Rate{PerMinute: 6, Burst: 1}}
	if ok, _ := l.take("ns", rules.Governing{a}, now); !ok {
		t.Fatal("first take must succeed")
	}
	if ok, _ := l.take("ns", rules.Governing{a}, now); ok {
		t.Fatal("a's bucket is empty")
	}
	l.giveBack("ns", rules.Governing{a}, now) // the create was refused
	if got := l.tokens(a.Key, now); got != 1 {
		t.Fatalf("a has %v tokens after giving back, want 1", got)
	}
	if l.global.refill(now); l.global.tokens != 2 {
		t.Fatalf("global bucket has %v tokens after giving back, want 2", l.global.tokens)
	}
	l.giveBack("ns", rules.Governing{a}, now) // twice: capped at the burst
	if got := l.tokens(a.Key, now); got != 1 {
		t.Fatalf("a has %v tokens after a second give back, want 1 (capped at burst)", got)
	}
	if l.global.refill(now); l.global.tokens != 2 {
		t.Fatalf("global bucket has %v tokens after a second give back, want 2 (capped at burst)", l.global.tokens)
	}
}

// The default policy's bucket is per namespace: one namespace's failures cannot use up another's.
func TestDefaultPolicyBucketPerNamespace(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newBuckets(rules.Rate{}, now)
	def := rules.DefaultPolicy(rules.Defaults{MaxUnavailable: intstr.FromInt32(1), MaxFailing: intstr.FromInt32(1), RestartsPerMinute: 1, Burst: 1})
	noisy := rules.Governing(rules.Select(nil, def, "noisy", nil))
	quiet := rules.Governing(rules.Select(nil, def, "quiet", nil))
	if noisy[0].Key == quiet[0].Key || !noisy[0].IsDefault() || noisy[0].Key.String() != "noisy/<default>" {
		t.Fatalf("default keys: %v %v", noisy[0].Key, quiet[0].Key)
	}
	if ok, _ := l.take("noisy", noisy, now); !ok {
		t.Fatal("noisy's first restart")
	}
	if ok, _ := l.take("noisy", noisy, now); ok {
		t.Fatal("noisy's bucket is empty")
	}
	if ok, _ := l.take("quiet", quiet, now); !ok {
		t.Fatal("quiet has a bucket of its own")
	}
}

// The manager-wide bucket is shared fairly: a namespace with a stream of restarts takes it down
// to its reserve and then gets its rate; a fresh hang in another namespace finds a token at once.
func TestGlobalBucketIsSharedFairly(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// 6 a minute, burst 4: a reserve of 1; a namespace served within 40 s is "recent".
	l := newBuckets(rules.Rate{PerMinute: 6, Burst: 4}, now)
	stream := rules.Governing{{Key: rules.PolicyKey{Namespace: "stream", Name: "fast"}, Rate: rules.Rate{PerMinute: 6000, Burst: 1000}}}
	fresh := rules.Governing{{Key: rules.PolicyKey{Namespace: "quiet", Name: "p"}, Rate: rules.Rate{PerMinute: 6, Burst: 3}}}
	other := rules.Governing{{Key: rules.PolicyKey{Namespace: "third", Name: "p"}, Rate: rules.Rate{PerMinute: 6, Burst: 3}}}
	took := 0
	for range 10 {
		if ok, _ := l.take("stream", stream, now); ok {
			took++
		}
	}
	if took != 3 {
		t.Fatalf("the stream took %d of the 4 tokens at once, want 3: one is kept for the others", took)
	}
	if w := l.wait("stream", stream, now); w != 10*time.Second {
		t.Fatalf("the stream waits %s, want 10s: the reserve is refilled first", w)
	}
	if ok, w := l.take("quiet", fresh, now); !ok {
		t.Fatalf("a fresh hang in another namespace waits %s", w)
	}
	// The reserve is gone; the stream and a third namespace get the next tokens as they come.
	if ok, _ := l.take("third", other, now); ok {
		t.Fatal("no token left")
	}
	now = now.Add(10 * time.Second)
	if ok, _ := l.take("stream", stream, now); ok {
		t.Fatal("the stream takes the reserve back before it is refilled")
	}
	if ok, w := l.take("third", other, now); !ok {
		t.Fatalf("the third namespace, not served yet, takes the token that came: waits %s", w)
	}
	// Quiet for 40 s (the bucket's refill time): the stream is fresh again.
	now = now.Add(40 * time.Second)
	if ok, w := l.take("stream", stream, now); !ok {
		t.Fatalf("the stream, served 50 s ago, waits %s", w)
	}
	if len(l.served) != 1 {
		t.Fatalf("served remembers %v: namespaces served long ago are forgotten", l.served)
	}
}

// A restart released by a canary that helped drains the buckets and is never refused by them: it
// takes a token, or what is left of one, from each, never driving one below empty, and counts as
// its namespace's use of the manager-wide bucket.
func TestDrain(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Manager-wide 6 a minute, burst 4: a reserve of 1.
	l := newBuckets(rules.Rate{PerMinute: 6, Burst: 4}, now)
	a := rules.Governing{{Key: rules.PolicyKey{Namespace: "ns", Name: "a"}, Rate: rules.Rate{PerMinute: 6, Burst: 2}}}
	for range 5 {
		l.drain("ns", a, now)
	}
	if got := l.tokens(a[0].Key, now); got != 0 {
		t.Fatalf("a has %v tokens after 5 drains of a burst of 2, want 0", got)
	}
	if l.global.refill(now); l.global.tokens != 0 {
		t.Fatalf("the manager-wide bucket has %v tokens, want 0", l.global.tokens)
	}
	// Half a token refilled: a drain takes it.
	now = now.Add(5 * time.Second)
	l.drain("ns", a, now)
	if got := l.tokens(a[0].Key, now); got != 0 {
		t.Fatalf("a has %v tokens, want 0", got)
	}
	// The others wait for the next token: 10 s, not the drained restarts' debt.
	if w := l.wait("other", rules.Governing{{Key: rules.PolicyKey{Namespace: "other", Name: "b"}, Rate: rules.Rate{PerMinute: 6, Burst: 2}}}, now); w != 10*time.Second {
		t.Fatalf("another namespace waits %s, want 10s", w)
	}
	if _, ok := l.served["ns"]; !ok {
		t.Fatal("a drain is its namespace's use of the manager-wide bucket")
	}
}
