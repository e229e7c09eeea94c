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

package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	decisioncontroller "github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/decision"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// policyFlags are the manager flags of the decision controller (docs/policy.md lists them).
type policyFlags struct {
	restarts                 string
	defaultMaxUnavailable    string
	defaultMaxFailing        string
	defaultRestartsPerMinute int
	defaultBurst             int
	defaultMaxHold           time.Duration
	globalRestartsPerMinute  int
	globalBurst              int
	nodeStormMaxFailing      string
	nodeStormMinWorkloads    int
	holdRecheckInterval      time.Duration
	stormSettlePeriod        time.Duration
	policyStatusInterval     time.Duration
}

func bindPolicyFlags(fs *flag.FlagSet) *policyFlags {
	f := &policyFlags{}
	fs.StringVar(&f.restarts, "restarts", "enabled",
		"Manager-wide switch: enabled, or disabled to keep probing and reporting but never restart (held as Disabled).")
	fs.StringVar(&f.defaultMaxUnavailable, "default-max-unavailable", "25%",
		"maxUnavailable of every pod whose policies set none and that no PodDisruptionBudget selects (the default policy sets none): integer or percent.")
	fs.StringVar(&f.defaultMaxFailing, "default-max-failing", "50%",
		"maxFailing (failure-storm breaker) of the default policy: integer or percent.")
	fs.IntVar(&f.defaultRestartsPerMinute, "default-restarts-per-minute", 6,
		"Token refill rate of the default policy's bucket (one bucket per namespace, shared by its pods under the default policy).")
	fs.IntVar(&f.defaultBurst, "default-burst", 3, "Bucket size of the default policy.")
	fs.DurationVar(&f.defaultMaxHold, "default-max-hold", rules.DefaultMaxHold,
		"maxHold of the default policy: the longest wait between two canary restarts of a doubt hold (FailureStorm, "+
			"NodeStorm, RestartIneffective; the first goes "+rules.FirstCanaryWait.String()+" after the onset, each failed one doubles the wait); "+
			"0s (doubt holds end only with their cause, on purpose only) or 1m to 24h.")
	fs.IntVar(&f.globalRestartsPerMinute, "global-restarts-per-minute", 60,
		"Manager-wide token refill rate across all policies; 0 disables the manager-wide limit.")
	fs.IntVar(&f.globalBurst, "global-burst", 30, "Manager-wide bucket size.")
	fs.StringVar(&f.nodeStormMaxFailing, "node-storm-max-failing", "50%",
		"Node storm: more failing enrolled pods on one node than this (integer or percent of the node's "+
			"enrolled pods) holds the node's restarts; 100% disables.")
	fs.IntVar(&f.nodeStormMinWorkloads, "node-storm-min-workloads", 3,
		"Node storm: at least this many distinct workloads must be failing on the node.")
	fs.DurationVar(&f.stormSettlePeriod, "storm-settle-period", 30*time.Second,
		"After a failure storm (workload over maxFailing, or node storm) drops within its limit, keep holding its "+
			"restarts this long, so that pods recovering a probe period apart are not restarted; 0 disables.")
	fs.DurationVar(&f.holdRecheckInterval, "hold-recheck-interval", 30*time.Second,
		"Fallback interval to decide a held restart again when no watch event arrives.")
	fs.DurationVar(&f.policyStatusInterval, "policy-status-interval", 30*time.Second,
		"How often each EnhancedLivenessPolicy status is refreshed besides on changes.")
	return f
}

func parseIntOrPercent(flagName, s string) (intstr.IntOrString, error) {
	v := intstr.Parse(s)
	if n, err := strconv.Atoi(s); err == nil {
		v = intstr.FromInt(n)
	}
	if err := rules.ValidateIntOrPercent(v); err != nil {
		return v, fmt.Errorf("--%s: %w", flagName, err)
	}
	return v, nil
}

// config validates the flags and returns the controllers' configuration; the daemons' Leases are
// in operatorNamespace.
func (f *policyFlags) config(operatorNamespace string) (decisioncontroller.Config, error) {
	var cfg decisioncontroller.Config
	switch f.restarts {
	case "enabled":
		cfg.RestartsEnabled = true
	case "disabled":
	default:
		return cfg, fmt.Errorf("--restarts: must be enabled or disabled, got %q", f.restarts)
	}
	var err error
	cfg.Defaults.MaxUnavailable, err = parseIntOrPercent("default-max-unavailable", f.defaultMaxUnavailable)
	if err != nil {
		return cfg, err
	}
	if cfg.Defaults.MaxFailing, err = parseIntOrPercent("default-max-failing", f.defaultMaxFailing); err != nil {
		return cfg, err
	}
	if cfg.NodeStorm.MaxFailing, err = parseIntOrPercent("node-storm-max-failing", f.nodeStormMaxFailing); err != nil {
		return cfg, err
	}
	cfg.Defaults.RestartsPerMinute = int32(f.defaultRestartsPerMinute)
	cfg.Defaults.Burst = int32(f.defaultBurst)
	if err := rules.ValidateMaxHold(f.defaultMaxHold); err != nil {
		return cfg, fmt.Errorf("--default-max-hold: %w", err)
	}
	cfg.Defaults.MaxHold = ptr.To(f.defaultMaxHold)
	cfg.GlobalRate = rules.Rate{PerMinute: int32(f.globalRestartsPerMinute), Burst: int32(f.globalBurst)}
	cfg.NodeStorm.MinWorkloads = int32(f.nodeStormMinWorkloads)
	cfg.OperatorNamespace = operatorNamespace
	if f.stormSettlePeriod < 0 {
		return cfg, fmt.Errorf("--storm-settle-period: must not be negative, got %s", f.stormSettlePeriod)
	}
	cfg.StormSettle = f.stormSettlePeriod
	cfg.HoldRecheckInterval = f.holdRecheckInterval
	cfg.StatusResyncInterval = f.policyStatusInterval
	return cfg, nil
}
