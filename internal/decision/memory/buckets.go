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
	"math"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// bucket holds up to Burst tokens and gains PerMinute of them per minute, also while idle. It
// starts full.
type bucket struct {
	rate   rules.Rate
	tokens float64
	last   time.Time
}

func newBucket(r rules.Rate, now time.Time) *bucket {
	return &bucket{rate: r, tokens: float64(r.Burst), last: now}
}

func (b *bucket) refill(now time.Time) {
	if now.After(b.last) {
		b.tokens += now.Sub(b.last).Minutes() * float64(b.rate.PerMinute)
		b.last = now
	}
	b.tokens = min(b.tokens, float64(b.rate.Burst))
}

// wait is how long until the bucket holds one token (0 if it does now).
func (b *bucket) wait() time.Duration { return b.waitFor(1) }

// waitFor is how long until the bucket holds n tokens (0 if it does now); never, when n is more
// than it can hold.
func (b *bucket) waitFor(n float64) time.Duration {
	if b.tokens >= n {
		return 0
	}
	if b.rate.PerMinute <= 0 || n > float64(b.rate.Burst) {
		return never
	}
	missing := n - b.tokens
	return time.Duration(math.Ceil(missing / float64(b.rate.PerMinute) * float64(time.Minute)))
}

const never = time.Duration(math.MaxInt64)

// buckets are the manager-wide bucket and one per policy. They live in memory only: a manager
// restart (or a leader change) starts every bucket full again, so right after a restart up to
// burst restarts per policy (and the global burst) can happen at once.
//
// The manager-wide bucket is shared fairly between namespaces: a namespace that took one of its
// tokens within the time the bucket takes to refill (burst / rate) may take another only while
// more than a reserve is left, a quarter of the burst (at least one token), kept for the
// namespaces that have not. So one namespace's stream of restarts gets the bucket's rate, and a
// fresh hang in another namespace still finds a token at once.
type buckets struct {
	global   *bucket // nil = no manager-wide limit
	byPolicy map[rules.PolicyKey]*bucket
	// served is when each namespace last took a token from the manager-wide bucket.
	served map[string]time.Time
}

// newBuckets returns full buckets; a global rate with PerMinute <= 0 means no manager-wide limit.
func newBuckets(global rules.Rate, now time.Time) *buckets {
	l := &buckets{byPolicy: map[rules.PolicyKey]*bucket{}, served: map[string]time.Time{}}
	if global.PerMinute > 0 {
		global.Burst = max(global.Burst, 1)
		l.global = newBucket(global, now)
	}
	return l
}

// of returns the buckets a restart governed by g needs, refilled to now, each policy's created
// (full) if new and given the policy's current rate: a rate change keeps the tokens, capped at
// the new burst. It changes no bucket when sync is false: it returns copies.
func (l *buckets) of(g rules.Governing, now time.Time, sync bool) []*bucket {
	bs := make([]*bucket, 0, len(g)+1)
	if l.global != nil {
		bs = append(bs, l.global)
	}
	for i := range g {
		b, ok := l.byPolicy[g[i].Key]
		switch {
		case !ok:
			b = newBucket(g[i].Rate, now)
			if sync {
				l.byPolicy[g[i].Key] = b
			}
		case !sync:
			c := *b
			b = &c
		}
		b.refill(now)
		b.rate = g[i].Rate
		bs = append(bs, b)
	}
	if !sync && l.global != nil {
		c := *l.global
		bs[0] = &c
	}
	for _, b := range bs {
		b.refill(now)
	}
	return bs
}

// wait is how long until the global bucket, as shared with namespace ns, and each governing
// policy's hold a token (0 when they do now). It changes nothing.
func (l *buckets) wait(ns string, g rules.Governing, now time.Time) time.Duration {
	return l.waitOf(ns, l.of(g, now, false), now)
}

func (l *buckets) waitOf(ns string, bs []*bucket, now time.Time) time.Duration {
	var wait time.Duration
	for i, b := range bs {
		if i == 0 && l.global != nil {
			wait = max(wait, l.globalWait(ns, b, now))
			continue
		}
		wait = max(wait, b.wait())
	}
	return wait
}

// globalWait is how long until namespace ns may take a token of the manager-wide bucket b: at
// once when it holds one and ns has not been served within its refill time; for a namespace
// served since, when more than the reserve is left, or when it has not been served for that
// long and a token is there.
func (l *buckets) globalWait(ns string, b *bucket, now time.Time) time.Duration {
	window := time.Duration(float64(b.rate.Burst) / float64(b.rate.PerMinute) * float64(time.Minute))
	last, ok := l.served[ns]
	if !ok || now.Sub(last) >= window {
		return b.wait()
	}
	reserve := max(1, math.Ceil(float64(b.rate.Burst)/4))
	return min(b.waitFor(1+reserve), max(last.Add(window).Sub(now), b.wait()))
}

// take takes one token from the global bucket and from the bucket of each governing policy, all
// or nothing, for a pod of namespace ns. When any bucket is empty (the global one as shared with
// ns) it takes none and returns how long until every bucket can give one. Either way the
// policies' buckets are brought up to date (of).
func (l *buckets) take(ns string, g rules.Governing, now time.Time) (bool, time.Duration) {
	bs := l.of(g, now, true)
	if wait := l.waitOf(ns, bs, now); wait > 0 {
		return false, wait
	}
	for _, b := range bs {
		b.tokens--
	}
	l.serve(ns, now)
	return true, 0
}

// drain takes a token, or what is left of one, from the global bucket and from the bucket of each
// governing policy, for a pod of namespace ns, and is never refused: a restart released by a
// canary that helped does not wait on the buckets (rules/ratelimit.go), but the other restarts
// they serve see it used. No bucket goes below empty: the next restart of another namespace
// waits for one token at most, never for this workload's recovery.
func (l *buckets) drain(ns string, g rules.Governing, now time.Time) {
	for _, b := range l.of(g, now, true) {
		b.tokens = max(0, b.tokens-1)
	}
	l.serve(ns, now)
}

// serve records that namespace ns took a token of the manager-wide bucket now.
func (l *buckets) serve(ns string, now time.Time) {
	if l.global == nil {
		return
	}
	l.served[ns] = now
	window := time.Duration(float64(l.global.rate.Burst) / float64(l.global.rate.PerMinute) * float64(time.Minute))
	for n, at := range l.served {
		if now.Sub(at) >= window {
			delete(l.served, n) // served long enough ago to be fresh again: bounded by the active namespaces
		}
	}
}

// giveBack returns the token a restart governed by g took, to each bucket (capped at its burst):
// its request was not created.
func (l *buckets) giveBack(_ string, g rules.Governing, now time.Time) {
	for _, b := range l.of(g, now, true) {
		b.tokens = min(b.tokens+1, float64(b.rate.Burst))
	}
}

// forget drops the bucket of a deleted policy.
func (l *buckets) forget(key rules.PolicyKey) { delete(l.byPolicy, key) }

// tokens reports the tokens of a policy's bucket at now (-1 if it has none yet), for tests.
func (l *buckets) tokens(key rules.PolicyKey, now time.Time) float64 {
	b, ok := l.byPolicy[key]
	if !ok {
		return -1
	}
	b.refill(now)
	return b.tokens
}
