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
	"cmp"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/facts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/figures"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
)

// Options are the policy status's settings.
type Options struct {
	// RestartsEnabled is the manager-wide switch, which the Ready condition tells.
	RestartsEnabled bool
	// StormSettle is the decision's storm settle period (rules.Settings.StormSettle): the
	// workloads' verdicts in the status are the decision's.
	StormSettle time.Duration
	// ResyncInterval refreshes each policy's status (enrolled and failing counts).
	ResyncInterval time.Duration
	// WriteTimeout bounds a write of status.recentEvictions (the eviction call's bound).
	WriteTimeout time.Duration
	// Clock is the manager's clock.
	Clock clock.Clock
	// APIClock is the API server's clock on Clock's time: status.recentEvictions are written and
	// read on it.
	APIClock *apiclock.Clock
	// EvictionWriter writes status.recentEvictions (default the manager's client).
	EvictionWriter client.Client
}

// Inbox is what the decision hands the policy status between its writes: the policies whose
// counts moved (Changed, the memory's notify) and the figures of enrolling counted (AddFigure).
// Neither ever blocks the decision.
type Inbox struct {
	dirty   statusNotifier
	figures *figureLog
}

// NewInbox returns an empty inbox.
func NewInbox() *Inbox {
	dirty := make(statusNotifier, 1024)
	return &Inbox{dirty: dirty, figures: newFigureLog(dirty.notify)}
}

// Changed wakes the status of policies whose counters moved.
func (in *Inbox) Changed(keys []rules.PolicyKey) { in.dirty.notify(keys) }

// AddFigure keeps a figure for the status of each of the policies, and wakes their status.
func (in *Inbox) AddFigure(policies []rules.PolicyKey, r figures.Record) { in.figures.add(policies, r) }

// SetupWithManager registers the policy-status controller: it reads the cache through the
// decision's facts builder and the decision's memory through snapshots.
func SetupWithManager(mgr ctrl.Manager, b *facts.Builder, w *facts.Workloads, mem *memory.Memory, in *Inbox, o Options) error {
	r := &Reconciler{
		Client:    mgr.GetClient(),
		opts:      o,
		recorder:  mgr.GetEventRecorder("enhanced-liveness-policy"),
		facts:     b,
		workloads: w,
		memory:    mem,
		figures:   in.figures,
		dirty:     in.dirty,
	}
	return r.setup(mgr)
}

// NewEvictions returns the writer of status.recentEvictions the decision calls around an
// eviction: it reads the policies from cache, writes with writer (o.EvictionWriter when set) and
// reads a policy again from api after a conflict.
func NewEvictions(cache client.Reader, writer client.Client, api client.Reader, o Options) *Evictions {
	return &Evictions{cache: cache, writer: cmp.Or[client.Client](o.EvictionWriter, writer), api: api, opts: o}
}

// statusNotifier wakes the policy-status controller for policies whose counters moved.
type statusNotifier chan event.GenericEvent

// notify never blocks: when the channel is full the periodic resync picks the change up. keys
// are policies with a status; the memory calls it when a decision changed their counts.
func (n statusNotifier) notify(keys []rules.PolicyKey) {
	for _, k := range keys {
		ev := event.GenericEvent{Object: &policyv1alpha1.EnhancedLivenessPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}}}
		select {
		case n <- ev:
		default:
		}
	}
}
