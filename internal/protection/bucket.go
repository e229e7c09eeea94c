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
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// TokenBucket holds up to Burst tokens and gains PerMinute of them per minute, also while idle.
// It starts full. It is not safe for concurrent use; Limiter serialises access.
type TokenBucket struct {
	rate   Rate
	tokens float64
	last   time.Time
}

func newBucket(r Rate, now time.Time) *TokenBucket {
	return &TokenBucket{rate: r, tokens: float64(r.Burst), last: now}
}

func (b *TokenBucket) refill(now time.Time) {
	if now.After(b.last) {
		b.tokens += now.Sub(b.last).Minutes() * float64(b.rate.PerMinute)
		b.last = now
	}
	b.tokens = min(b.tokens, float64(b.rate.Burst))
}

// wait is how long until the bucket holds one token (0 if it does now).
func (b *TokenBucket) wait() time.Duration {
	if b.tokens >= 1 {
		return 0
	}
	if b.rate.PerMinute <= 0 {
		return time.Duration(math.MaxInt64)
	}
	missing := 1 - b.tokens
	return time.Duration(math.Ceil(missing / float64(b.rate.PerMinute) * float64(time.Minute)))
}

// Tokens returns the tokens available now (after refill), for tests and status.
func (b *TokenBucket) Tokens(now time.Time) float64 {
	b.refill(now)
	return b.tokens
}

// Limiter holds the manager-wide bucket and one bucket per policy. Buckets live in memory only:
// a manager restart (or a leader change) starts every bucket full again, so right after a
// restart up to burst restarts per policy (and the global burst) can happen at once.
type Limiter struct {
	mu      sync.Mutex
	clock   clock.PassiveClock
	global  *TokenBucket // nil = no manager-wide limit
	buckets map[PolicyKey]*TokenBucket
}

// NewLimiter returns a limiter; a global rate with PerMinute <= 0 means no manager-wide limit.
func NewLimiter(c clock.PassiveClock, global Rate) *Limiter {
	l := &Limiter{clock: c, buckets: map[PolicyKey]*TokenBucket{}}
	if global.PerMinute > 0 {
		global.Burst = max(global.Burst, 1)
		l.global = newBucket(global, c.Now())
	}
	return l
}

// Reservation is a token taken from each bucket a restart needs. The decision holds it until the
// ContainerRecreateRequest exists: a create that fails (refused, or AlreadyExists) gives it back.
type Reservation struct {
	l       *Limiter
	buckets []*TokenBucket
}

// Cancel gives the tokens back (capped at each bucket's burst). It is safe to call on the zero
// value and more than once.
func (r *Reservation) Cancel() {
	if r == nil || r.l == nil {
		return
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	now := r.l.clock.Now()
	for _, b := range r.buckets {
		b.refill(now)
		b.tokens = min(b.tokens+1, float64(b.rate.Burst))
	}
	r.l, r.buckets = nil, nil
}

// Take takes one token from the global bucket and from the bucket of each governing policy,
// all or nothing, and returns them as a Reservation. When any bucket is empty it takes none and
// returns how long until every bucket can give one. A policy whose rate changed keeps its tokens
// (capped at the new burst).
func (l *Limiter) Take(g Governing) (*Reservation, bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	bs := make([]*TokenBucket, 0, len(g)+1)
	if l.global != nil {
		bs = append(bs, l.global)
	}
	for i := range g {
		b, ok := l.buckets[g[i].Key]
		if !ok {
			b = newBucket(g[i].Rate, now)
			l.buckets[g[i].Key] = b
		}
		b.refill(now)
		b.rate = g[i].Rate
		bs = append(bs, b)
	}
	var wait time.Duration
	for _, b := range bs {
		b.refill(now)
		wait = max(wait, b.wait())
	}
	if wait > 0 {
		return nil, false, wait
	}
	for _, b := range bs {
		b.tokens--
	}
	return &Reservation{l: l, buckets: bs}, true, 0
}

// Forget drops the bucket of a deleted policy.
func (l *Limiter) Forget(key PolicyKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.buckets, key)
}

// Tokens reports the tokens of a policy's bucket now (-1 if it has none yet).
func (l *Limiter) Tokens(key PolicyKey) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		return -1
	}
	return b.Tokens(l.clock.Now())
}
