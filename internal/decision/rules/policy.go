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

package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Defaults are the manager flags that make up the default policy, used for pods no
// EnhancedLivenessPolicy selects.
type Defaults struct {
	// MaxUnavailable is not the default policy's own: it is the budget of every pod whose
	// policies set no maxUnavailable and that no PodDisruptionBudget selects (Settings).
	MaxUnavailable    intstr.IntOrString
	MaxFailing        intstr.IntOrString
	RestartsPerMinute int32
	Burst             int32
	// MaxHold is the default policy's maxHold (--default-max-hold); nil: DefaultMaxHold. A
	// pointer, so that a zero value (doubt holds never end) is only ever set on purpose.
	MaxHold *time.Duration
}

// PolicyKey identifies a governing policy: an EnhancedLivenessPolicy by namespace and name, or
// the manager's default policy.
type PolicyKey struct {
	Namespace, Name string
}

// defaultPolicyName names the default policy; no EnhancedLivenessPolicy can have this name.
const defaultPolicyName = "<default>"

// DefaultPolicyKey is the key of the default policy in a namespace: the pods that no policy
// selects share one token bucket per namespace, so that one namespace's failing fleet cannot use
// up another's restarts (the manager-wide bucket still bounds them all).
func DefaultPolicyKey(namespace string) PolicyKey {
	return PolicyKey{Namespace: namespace, Name: defaultPolicyName}
}

// IsDefault reports whether k is the key of a namespace's default policy.
func (k PolicyKey) IsDefault() bool { return k.Name == defaultPolicyName }

// String is namespace/name; namespace/<default> for the default policy.
func (k PolicyKey) String() string { return k.Namespace + "/" + k.Name }

// Policy is one governing policy, compiled: selectors parsed, defaults applied.
type Policy struct {
	// Key is the policy's namespace and name, or DefaultPolicyKey of the pod's namespace.
	Key       PolicyKey
	Namespace string
	Name      string
	selector  labels.Selector

	// Shadow: the policy admits pods in Shadow mode (Shadow, or DryRun). The decision goes by
	// each pod's admitted mode (Facts.Shadow); this only explains a Shadow pod's hold.
	Shadow    bool
	Blacklist Blacklist
	// MaxUnavailable is spec.maxUnavailable; nil when the policy does not set it (the default
	// policy never does): the pod's PodDisruptionBudgets then set the budget (budget.go).
	MaxUnavailable *intstr.IntOrString
	MaxFailing     intstr.IntOrString
	Rate           Rate
	Breaker        RestartBreaker
	// MaxHold bounds the policy's doubt holds (bounded.go); zero: they never end.
	MaxHold time.Duration
	// Evictions are the policy's status.recentEvictions as read: the evictions it decided,
	// which a new leader's memory does not have (evict.go).
	Evictions []policyv1alpha1.RecentEviction
}

// IsDefault reports whether p is the manager's default policy.
func (p *Policy) IsDefault() bool { return p.Key.IsDefault() }

// Rate is a token-bucket setting.
type Rate struct {
	PerMinute int32
	Burst     int32
}

// DefaultPolicy builds the default policy from manager flags.
func DefaultPolicy(d Defaults) Policy {
	maxHold := DefaultMaxHold
	if d.MaxHold != nil {
		maxHold = *d.MaxHold
	}
	return Policy{
		Key:        PolicyKey{Name: defaultPolicyName},
		selector:   labels.Everything(),
		MaxFailing: d.MaxFailing,
		Rate:       Rate{PerMinute: d.RestartsPerMinute, Burst: d.Burst},
		Breaker:    DefaultRestartBreaker,
		MaxHold:    maxHold,
	}
}

// ValidateDefaults checks manager flags with the same rules as the policy API.
func ValidateDefaults(d Defaults) error {
	if err := ValidateIntOrPercent(d.MaxUnavailable); err != nil {
		return fmt.Errorf("--default-max-unavailable: %w", err)
	}
	if err := ValidateIntOrPercent(d.MaxFailing); err != nil {
		return fmt.Errorf("--default-max-failing: %w", err)
	}
	if d.RestartsPerMinute < 1 {
		return fmt.Errorf("--default-restarts-per-minute: must be at least 1, got %d", d.RestartsPerMinute)
	}
	if d.Burst < 1 {
		return fmt.Errorf("--default-burst: must be at least 1, got %d", d.Burst)
	}
	if d.MaxHold != nil {
		if err := ValidateMaxHold(*d.MaxHold); err != nil {
			return fmt.Errorf("--default-max-hold: %w", err)
		}
	}
	return nil
}

// ValidateMaxHold is the rule of spec.maxHold and --default-max-hold: 0s (doubt holds never end,
// only on purpose) or between 1m and 24h.
func ValidateMaxHold(d time.Duration) error {
	if d != 0 && (d < time.Minute || d > 24*time.Hour) {
		return fmt.Errorf("must be 0s (doubt holds never end) or between 1m and 24h, got %s", d)
	}
	return nil
}

// Compile turns an EnhancedLivenessPolicy into a Policy. API defaults (Enforce, 50%, 6/min,
// burst 3) apply to fields the API server has not defaulted (e.g. objects built in memory).
// Errors name the field and the rule, so they can be shown in the Ready condition and by the
// validation webhook.
func Compile(p *policyv1alpha1.EnhancedLivenessPolicy) (Policy, error) {
	out := Policy{
		Key:        PolicyKey{Namespace: p.Namespace, Name: p.Name},
		Namespace:  p.Namespace,
		Name:       p.Name,
		Shadow:     p.Spec.Mode.IsShadow(),
		MaxFailing: intstr.FromString("50%"),
		Rate:       Rate{PerMinute: 6, Burst: 3},
		MaxHold:    DefaultMaxHold,
		Evictions:  slices.Clone(p.Status.RecentEvictions),
	}
	switch p.Spec.Mode {
	case "", policyv1alpha1.ModeEnforce, policyv1alpha1.ModeShadow, policyv1alpha1.ModeDryRun:
	default:
		return out, fmt.Errorf("spec.mode: must be Enforce or Shadow (DryRun is accepted as its old name), got %q", p.Spec.Mode)
	}
	out.selector = labels.Everything()
	if p.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			return out, fmt.Errorf("spec.selector: %w", err)
		}
		out.selector = sel
	}
	if p.Spec.MaxUnavailable != nil {
		if err := ValidateIntOrPercent(*p.Spec.MaxUnavailable); err != nil {
			return out, fmt.Errorf("spec.maxUnavailable: %w", err)
		}
		out.MaxUnavailable = ptr.To(*p.Spec.MaxUnavailable)
	}
	if p.Spec.MaxFailing != nil {
		if err := ValidateIntOrPercent(*p.Spec.MaxFailing); err != nil {
			return out, fmt.Errorf("spec.maxFailing: %w", err)
		}
		out.MaxFailing = *p.Spec.MaxFailing
	}
	if r := p.Spec.RateLimit.RestartsPerMinute; r != 0 {
		if r < 1 {
			return out, fmt.Errorf("spec.rateLimit.restartsPerMinute: must be at least 1, got %d", r)
		}
		out.Rate.PerMinute = r
	}
	if b := p.Spec.RateLimit.Burst; b != 0 {
		if b < 1 {
			return out, fmt.Errorf("spec.rateLimit.burst: must be at least 1, got %d", b)
		}
		out.Rate.Burst = b
	}
	bl, err := CompileBlacklist(p.Spec.Blacklist)
	if err != nil {
		return out, err
	}
	out.Blacklist = bl
	if out.Breaker, err = compileBreaker(p.Spec.RestartEffectiveness); err != nil {
		return out, err
	}
	if h := p.Spec.MaxHold; h != nil {
		if err := ValidateMaxHold(h.Duration); err != nil {
			return out, fmt.Errorf("spec.maxHold: %w", err)
		}
		out.MaxHold = h.Duration
	}
	return out, nil
}

// ValidateIntOrPercent accepts an integer >= 0 or a percent from 0% to 100%.
func ValidateIntOrPercent(v intstr.IntOrString) error {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return fmt.Errorf("must be an integer >= 0 or a percent from 0%% to 100%%, got %d", v.IntVal)
		}
		return nil
	}
	s := v.StrVal
	if !strings.HasSuffix(s, "%") {
		return fmt.Errorf("must be an integer >= 0 or a percent from 0%% to 100%%, got %q", s)
	}
	var n int
	if _, err := fmt.Sscanf(s, "%d%%", &n); err != nil || fmt.Sprintf("%d%%", n) != s || n < 0 || n > 100 {
		return fmt.Errorf("must be an integer >= 0 or a percent from 0%% to 100%%, got %q", s)
	}
	return nil
}

// Scaled resolves an int-or-percent against total, rounding percents up as a
// PodDisruptionBudget's maxUnavailable does (25% of 10 is 3).
func Scaled(v intstr.IntOrString, total int32) int32 {
	if v.Type == intstr.Int {
		return v.IntVal
	}
	var pct int64
	_, _ = fmt.Sscanf(v.StrVal, "%d%%", &pct)
	t := int64(total)
	return int32((pct*t + 99) / 100)
}

// Selects reports whether p governs a pod with these labels in namespace ns.
func (p *Policy) Selects(ns string, podLabels map[string]string) bool {
	if p.IsDefault() {
		return true
	}
	return p.Namespace == ns && p.selector.Matches(labels.Set(podLabels))
}

// Select returns the policies of the pod's namespace that select it; when none does, the
// default policy alone, keyed to the namespace.
func Select(policies []Policy, def Policy, ns string, podLabels map[string]string) []Policy {
	var out []Policy
	for i := range policies {
		if policies[i].Selects(ns, podLabels) {
			out = append(out, policies[i])
		}
	}
	if len(out) == 0 {
		def.Key, def.Namespace = DefaultPolicyKey(ns), ns
		return []Policy{def}
	}
	return out
}

// Governing is the set of policies that govern one pod, combined so that the most restrictive
// wins: a restart happens only if every one of them allows it.
type Governing []Policy

// Shadow returns the first policy in Shadow mode, if any.
func (g Governing) Shadow() (*Policy, bool) {
	for i := range g {
		if g[i].Shadow {
			return &g[i], true
		}
	}
	return nil, false
}

// Blacklisted returns the policy that blacklists the target and a description of the entry.
func (g Governing) Blacklisted(t Target) (string, bool) {
	for i := range g {
		if what, ok := g[i].Blacklist.Matches(t); ok {
			return fmt.Sprintf("%s by policy %s", what, g[i].Key), true
		}
	}
	return "", false
}

func (g Governing) min(desired int32, f func(*Policy) *intstr.IntOrString) (n int32, by PolicyKey, ok bool) {
	n = -1
	for i := range g {
		v := f(&g[i])
		if v == nil {
			continue // the policy does not set it
		}
		if s := Scaled(*v, desired); n < 0 || s < n {
			n, by = s, g[i].Key
		}
	}
	if n < 0 {
		return 0, PolicyKey{}, false
	}
	return n, by, true
}

// WithStatus returns the keys of the policies that have a status to count decisions in: every
// EnhancedLivenessPolicy, not the manager's default policy.
func (g Governing) WithStatus() []PolicyKey {
	out := make([]PolicyKey, 0, len(g))
	for i := range g {
		if !g[i].IsDefault() {
			out = append(out, g[i].Key)
		}
	}
	return out
}
