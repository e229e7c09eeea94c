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

package policystatus

import (
	"sync"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/figures"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// maxPendingFigures bounds the figures a policy's status has not taken yet (a status that cannot
// be written for long loses the oldest).
const maxPendingFigures = 1000

// figureLog hands the figures the decision counts to the policy-status controller, the one
// writer of status.figures: the figures wait per policy until a status write took them.
type figureLog struct {
	mu      sync.Mutex
	pending map[rules.PolicyKey][]figures.Record
	notify  func([]rules.PolicyKey)
}

func newFigureLog(notify func([]rules.PolicyKey)) *figureLog {
	return &figureLog{pending: map[rules.PolicyKey][]figures.Record{}, notify: notify}
}

// add keeps a figure for the status of each of the policies, and wakes their status.
func (l *figureLog) add(policies []rules.PolicyKey, r figures.Record) {
	if len(policies) == 0 {
		return
	}
	l.mu.Lock()
	for _, k := range policies {
		p := append(l.pending[k], r)
		l.pending[k] = p[max(0, len(p)-maxPendingFigures):]
	}
	l.mu.Unlock()
	l.notify(policies)
}

// peek returns the figures waiting for the policy's status.
func (l *figureLog) peek(key rules.PolicyKey) []figures.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]figures.Record(nil), l.pending[key]...)
}

// taken drops the first n figures of the policy: its status holds them.
func (l *figureLog) taken(key rules.PolicyKey, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pending[key]
	if n = min(n, len(p)); n == len(p) {
		delete(l.pending, key)
		return
	}
	l.pending[key] = p[n:]
}

// forget drops what waits for a deleted policy.
func (l *figureLog) forget(key rules.PolicyKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, key)
}
