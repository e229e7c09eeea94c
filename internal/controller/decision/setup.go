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

package decision

import (
	"cmp"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/apiclock"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/facts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/figures"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/nodecondition"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// Config is what the manager flags set for the decision and policy-status controllers.
type Config struct {
	// RestartsEnabled is the manager-wide switch (--restarts=enabled|disabled).
	RestartsEnabled bool
	// Defaults make up the default policy for pods no EnhancedLivenessPolicy selects.
	Defaults rules.Defaults
	// GlobalRate is the manager-wide token bucket; PerMinute 0 disables it.
	GlobalRate rules.Rate
	// NodeStorm is the node-storm rule.
	NodeStorm rules.NodeStormRule
	// StormSettle is how long a workload's or node's failing count must stay within its limit
	// after a failure storm before restarts resume (--storm-settle-period); zero turns it off.
	StormSettle time.Duration
	// OperatorNamespace holds the daemons' Leases.
	OperatorNamespace string
	// HoldRecheckInterval is the fallback re-decision of a held restart when no watch event
	// arrives (RateLimited holds requeue for their next token instead). Default 30s.
	HoldRecheckInterval time.Duration
	// StatusResyncInterval refreshes each policy's status (enrolled and failing counts). Default 30s.
	StatusResyncInterval time.Duration
	// NodeConditionInterval is how often the Nodes' EnhancedLivenessNodeStorm condition is judged
	// from the NodeStorm holds. Default 5s.
	NodeConditionInterval time.Duration
	// MaxConcurrentReconciles of the decision controller. Default 8: the facts are read from the
	// cache in parallel, deciding is serialised under the memory's lock and cheap; the workers
	// mostly wait for CRR creation.
	MaxConcurrentReconciles int
	// Clock is injected by tests; default the real clock.
	Clock clock.Clock
	// APIClock is the API server's clock as the manager's requests measure it, on Clock's time
	// (internal/apiclock): the times of the RestartHolds and of status.recentEvictions are
	// written on it and read back from it. Default: never measured, the local clock (times read
	// back are still clamped to now).
	APIClock *apiclock.Clock
	// OnDecision, when set, is called after every decision (benchmarks, diagnostics).
	OnDecision func(DecisionRecord)

	// unprobedGrace is how long a pod is seen not probed before its first LivenessNotProbed event
	// (default unprobedGrace); tests shorten it.
	unprobedGrace time.Duration

	// nodeConditionConfirm is how long a node's verdict must stay True before its condition is
	// set (default nodecondition.ConfirmFor); tests shorten it.
	nodeConditionConfirm time.Duration

	// evictTimeout bounds an eviction call (default evictTimeout); tests shorten it.
	evictTimeout time.Duration

	// liveReader reads NodePodProbes from the API server to confirm a held restart (default the
	// manager's API reader); tests replace it to play a cache that lags behind.
	liveReader client.Reader

	// evictClient evicts pods and writes status.recentEvictions (default the manager's client);
	// tests replace it to play a refused write or an API server not reached.
	evictClient client.Client
}

func (c *Config) complete() error {
	if err := rules.ValidateDefaults(c.Defaults); err != nil {
		return err
	}
	if err := c.NodeStorm.Validate(); err != nil {
		return err
	}
	if c.GlobalRate.PerMinute < 0 || c.GlobalRate.Burst < 0 {
		return fmt.Errorf("--global-restarts-per-minute and --global-burst must not be negative")
	}
	if c.OperatorNamespace == "" {
		c.OperatorNamespace = appsv1alpha1.DefaultOperatorNamespace
	}
	if c.HoldRecheckInterval <= 0 {
		c.HoldRecheckInterval = 30 * time.Second
	}
	if c.StatusResyncInterval <= 0 {
		c.StatusResyncInterval = 30 * time.Second
	}
	if c.NodeConditionInterval <= 0 {
		c.NodeConditionInterval = 5 * time.Second
	}
	if c.nodeConditionConfirm <= 0 {
		c.nodeConditionConfirm = nodecondition.ConfirmFor
	}
	if c.MaxConcurrentReconciles <= 0 {
		c.MaxConcurrentReconciles = 8
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.APIClock == nil {
		c.APIClock = apiclock.New(c.Clock)
	}
	if c.unprobedGrace <= 0 {
		c.unprobedGrace = unprobedGrace
	}
	if c.evictTimeout <= 0 {
		c.evictTimeout = evictTimeout
	}
	return nil
}

// SetupWithManager registers the decision controller and the policy-status controller. The cache
// indexes they query are registered by index.AddDefaultIndexes. The decision controller owns the
// decision's memory; the status controller reads snapshots of it.
func SetupWithManager(mgr ctrl.Manager, cfg Config) error {
	if err := cfg.complete(); err != nil {
		return err
	}
	dirty := make(statusNotifier, 1024)
	workloads := facts.NewWorkloads(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetClient(), cfg.Clock)
	builder := facts.NewBuilder(mgr.GetClient(), workloads, facts.Options{
		Settings:          rules.Settings{RestartsEnabled: cfg.RestartsEnabled, NodeStorm: cfg.NodeStorm, StormSettle: cfg.StormSettle},
		Default:           rules.DefaultPolicy(cfg.Defaults),
		OperatorNamespace: cfg.OperatorNamespace,
		Clock:             cfg.Clock,
		API:               mgr.GetAPIReader(),
		Evictions:         localEvictions(cfg.APIClock),
	})
	mem := memory.New(cfg.Clock, cfg.GlobalRate, dirty.notify)
	figureLog := newFigureLog(dirty.notify)
	records := newHoldRecords(mgr, mem, cfg.APIClock)
	mem.NotifyHolds(records.notify)
	if err := records.setup(mgr); err != nil {
		return err
	}
	d := &DecisionReconciler{
		Client:      mgr.GetClient(),
		live:        cmp.Or[client.Reader](cfg.liveReader, mgr.GetAPIReader()),
		api:         mgr.GetAPIReader(),
		evictClient: cmp.Or[client.Client](cfg.evictClient, mgr.GetClient()),
		cfg:         cfg,
		clock:       cfg.Clock,
		recorder:    mgr.GetEventRecorder("enhanced-liveness-decision"),
		facts:       builder,
		workloads:   workloads,
		memory:      mem,
		records:     records,
		figures:     figures.NewLedger[figureTag](0),
		figureLog:   figureLog,
	}
	if err := d.setup(mgr); err != nil {
		return err
	}
	if err := mgr.Add(holdGauges(mem, cfg.StatusResyncInterval)); err != nil {
		return err
	}
	// Every held restart is decided again within HoldRecheckInterval: by then a new leader's
	// memory has the NodeStorm holds back, and may clear a condition.
	if err := mgr.Add(&nodeConditions{client: mgr.GetClient(), api: mgr.GetAPIReader(), facts: builder, memory: mem,
		recorder: mgr.GetEventRecorder("enhanced-liveness-node-condition"), clock: cfg.Clock,
		interval: cfg.NodeConditionInterval, grace: cfg.HoldRecheckInterval, confirm: cfg.nodeConditionConfirm}); err != nil {
		return err
	}
	if err := mgr.Add(newUnprobedWatch(mgr.GetClient(), builder, mgr.GetEventRecorder("enhanced-liveness-decision"),
		cfg.Clock, cfg.StatusResyncInterval, cfg.unprobedGrace)); err != nil {
		return err
	}
	s := &EnhancedLivenessPolicyReconciler{
		Client:    mgr.GetClient(),
		cfg:       cfg,
		recorder:  mgr.GetEventRecorder("enhanced-liveness-policy"),
		facts:     builder,
		workloads: workloads,
		memory:    mem,
		figures:   figureLog,
		dirty:     dirty,
	}
	return s.setup(mgr)
}

// localEvictions converts a policy's status.recentEvictions, as the decision reads them, to the
// manager's clock.
func localEvictions(clk *apiclock.Clock) func(*policyv1alpha1.EnhancedLivenessPolicy) []policyv1alpha1.RecentEviction {
	log := ctrl.Log.WithName("decision")
	return func(p *policyv1alpha1.EnhancedLivenessPolicy) []policyv1alpha1.RecentEviction {
		return clk.Read().LocalEvictions(log, p.Namespace+"/"+p.Name, p.Status.RecentEvictions)
	}
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
