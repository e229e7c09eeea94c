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
	"fmt"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/nodestorm"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/policystatus"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restarthold"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/unprobed"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/facts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
)

// DecisionRecord describes one decision, for Config.OnDecision.
type DecisionRecord = restart.DecisionRecord

// Config is what the manager flags set for the decision's controllers.
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
	// (internal/manager/apiclock): the times of the RestartHolds and of status.recentEvictions are
	// written on it and read back from it. Default: never measured, the local clock (times read
	// back are still clamped to now).
	APIClock *apiclock.Clock
	// OnDecision, when set, is called after every decision (benchmarks, diagnostics).
	OnDecision func(DecisionRecord)

	// Testing is what tests change; the manager leaves it zero.
	Testing Testing
}

// Testing shortens the waits and replaces the clients that tests play with.
type Testing struct {
	// UnprobedGrace is how long a pod is seen not probed before its first LivenessNotProbed
	// event (default one minute).
	UnprobedGrace time.Duration
	// NodeConditionConfirm is how long a node's verdict must stay True before its condition is
	// set (default nodecondition.ConfirmFor).
	NodeConditionConfirm time.Duration
	// EvictTimeout bounds an eviction call and the writes of status.recentEvictions around it
	// (default restart.DefaultEvictTimeout).
	EvictTimeout time.Duration
	// LiveReader reads NodePodProbeReports from the API server to confirm a held restart (default
	// the manager's API reader): a cache that lags behind.
	LiveReader client.Reader
	// EvictClient evicts pods and writes status.recentEvictions (default the manager's client): a
	// refused write, or an API server not reached.
	EvictClient client.Client
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
	if c.Testing.EvictTimeout <= 0 {
		c.Testing.EvictTimeout = restart.DefaultEvictTimeout
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.APIClock == nil {
		c.APIClock = apiclock.New(c.Clock)
	}
	return nil
}

// SetupWithManager builds the facts builder and the memory once and registers the controllers
// that share them, one per object they write: the decision (ContainerRecreateRequests and
// evictions), the RestartHold records of its holds, the policy status, the Nodes' condition and
// the unprobed watch. The cache indexes they query are registered by managercache.AddIndexes.
func SetupWithManager(mgr ctrl.Manager, cfg Config) error {
	if err := cfg.complete(); err != nil {
		return err
	}
	inbox := policystatus.NewInbox()
	workloads := facts.NewWorkloads(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetClient(), cfg.Clock)
	builder := facts.NewBuilder(mgr.GetClient(), workloads, facts.Options{
		Settings: rules.Settings{RestartsEnabled: cfg.RestartsEnabled, NodeStorm: cfg.NodeStorm, StormSettle: cfg.StormSettle,
			MaxUnavailable: &cfg.Defaults.MaxUnavailable},
		Default:           rules.DefaultPolicy(cfg.Defaults),
		OperatorNamespace: cfg.OperatorNamespace,
		Clock:             cfg.Clock,
		API:               mgr.GetAPIReader(),
		Evictions:         localEvictions(cfg.APIClock),
	})
	mem := memory.New(cfg.Clock, cfg.GlobalRate, inbox.Changed)
	holds := restarthold.New(mgr, mem, cfg.APIClock)
	mem.NotifyHolds(holds.Notify)
	if err := holds.SetupWithManager(mgr); err != nil {
		return err
	}
	status := policystatus.Options{RestartsEnabled: cfg.RestartsEnabled, StormSettle: cfg.StormSettle,
		ResyncInterval: cfg.StatusResyncInterval, WriteTimeout: cfg.Testing.EvictTimeout, Clock: cfg.Clock,
		APIClock: cfg.APIClock, EvictionWriter: cfg.Testing.EvictClient}
	if err := restart.SetupWithManager(mgr, builder, workloads, mem, holds, policystatus.NewEvictions(mgr.GetClient(), mgr.GetClient(), mgr.GetAPIReader(), status), inbox,
		restart.Options{OperatorNamespace: cfg.OperatorNamespace, HoldRecheckInterval: cfg.HoldRecheckInterval,
			MaxConcurrentReconciles: cfg.MaxConcurrentReconciles, GaugeInterval: cfg.StatusResyncInterval,
			EvictTimeout: cfg.Testing.EvictTimeout, Clock: cfg.Clock, OnDecision: cfg.OnDecision,
			LiveReader: cfg.Testing.LiveReader, EvictClient: cfg.Testing.EvictClient}); err != nil {
		return err
	}
	// Every held restart is decided again within HoldRecheckInterval: by then a new leader's
	// memory has the NodeStorm holds back, and may clear a condition.
	if err := nodestorm.SetupWithManager(mgr, builder, mem, nodestorm.Options{Interval: cfg.NodeConditionInterval,
		Grace: cfg.HoldRecheckInterval, Confirm: cfg.Testing.NodeConditionConfirm, Clock: cfg.Clock}); err != nil {
		return err
	}
	if err := unprobed.SetupWithManager(mgr, builder, unprobed.Options{Interval: cfg.StatusResyncInterval,
		Grace: cfg.Testing.UnprobedGrace, Clock: cfg.Clock}); err != nil {
		return err
	}
	return policystatus.SetupWithManager(mgr, builder, workloads, mem, inbox, status)
}

// localEvictions converts a policy's status.recentEvictions, as the decision reads them, to the
// manager's clock.
func localEvictions(clk *apiclock.Clock) func(*policyv1alpha1.EnhancedLivenessPolicy) []policyv1alpha1.RecentEviction {
	log := ctrl.Log.WithName("decision")
	return func(p *policyv1alpha1.EnhancedLivenessPolicy) []policyv1alpha1.RecentEviction {
		return clk.Read().LocalEvictions(log, p.Namespace+"/"+p.Name, p.Status.RecentEvictions)
	}
}
