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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

func TestScaledRoundsUpLikePDB(t *testing.T) {
	pct := intstr.FromString
	cases := []struct {
		v     intstr.IntOrString
		total int32
		want  int32
	}{
		{pct("25%"), 1, 1}, {pct("25%"), 2, 1}, {pct("25%"), 3, 1}, {pct("25%"), 10, 3},
		{pct("50%"), 1, 1}, {pct("50%"), 2, 1}, {pct("50%"), 3, 2}, {pct("50%"), 10, 5},
		{pct("0%"), 10, 0}, {pct("100%"), 3, 3}, {pct("10%"), 10, 1}, {pct("1%"), 10, 1},
		{pct("33%"), 3, 1}, {pct("34%"), 3, 2}, {pct("25%"), 0, 0},
		{intstr.FromInt32(2), 10, 2}, {intstr.FromInt32(0), 10, 0}, {intstr.FromInt32(20), 3, 20},
	}
	for _, c := range cases {
		if got := Scaled(c.v, c.total); got != c.want {
			t.Errorf("Scaled(%s, %d) = %d, want %d", c.v.String(), c.total, got, c.want)
		}
	}
}

func TestValidateIntOrPercent(t *testing.T) {
	good := []intstr.IntOrString{intstr.FromInt32(0), intstr.FromInt32(7), intstr.FromString("0%"), intstr.FromString("100%"), intstr.FromString("25%")}
	bad := []intstr.IntOrString{intstr.FromInt32(-1), intstr.FromString("101%"), intstr.FromString("25"), intstr.FromString("abc%"), intstr.FromString("05%"), intstr.FromString("-5%")}
	for _, v := range good {
		if err := ValidateIntOrPercent(v); err != nil {
			t.Errorf("%s: unexpected error %v", v.String(), err)
		}
	}
	for _, v := range bad {
		if err := ValidateIntOrPercent(v); err == nil {
			t.Errorf("%s: expected an error", v.String())
		}
	}
}

func elp(ns, name string, mutate func(*policyv1alpha1.EnhancedLivenessPolicySpec)) *policyv1alpha1.EnhancedLivenessPolicy {
	p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

func mustCompile(t *testing.T, p *policyv1alpha1.EnhancedLivenessPolicy) Policy {
	t.Helper()
	c, err := Compile(p)
	if err != nil {
		t.Fatalf("compile %s: %v", p.Name, err)
	}
	return c
}

func TestCompileErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*policyv1alpha1.EnhancedLivenessPolicySpec)
		field  string
	}{
		{"selector", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}
		}, "spec.selector"},
		{"podSelector", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}}
		}, "spec.blacklist.podSelector"},
		{"apiVersion", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.Blacklist = &policyv1alpha1.Blacklist{Workloads: []policyv1alpha1.WorkloadReference{{APIVersion: "a/b/c", Kind: "Deployment", Name: "x"}}}
		}, "spec.blacklist.workloads[0].apiVersion"},
		{"maxUnavailable", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			v := intstr.FromString("150%")
			s.MaxUnavailable = &v
		}, "spec.maxUnavailable"},
		{"maxFailing", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			v := intstr.FromInt32(-2)
			s.MaxFailing = &v
		}, "spec.maxFailing"},
		{"mode", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.Mode = "Sometimes" }, "spec.mode"},
		{"burst", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.RateLimit.Burst = -1 }, "spec.rateLimit.burst"},
		{"maxHold too short", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxHold = &metav1.Duration{Duration: 30 * time.Second}
		}, "spec.maxHold: must be 0s (doubt holds never end) or between 1m and 24h"},
		{"maxHold too long", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxHold = &metav1.Duration{Duration: 25 * time.Hour}
		}, "spec.maxHold"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(elp("ns", "p", c.mutate))
			if err == nil || !strings.HasPrefix(err.Error(), c.field) {
				t.Fatalf("want error naming %s, got %v", c.field, err)
			}
		})
	}
}

func TestCompileDefaults(t *testing.T) {
	p := mustCompile(t, elp("ns", "p", nil))
	if p.Shadow || p.MaxUnavailable != nil || p.MaxFailing.String() != "50%" || p.Rate != (Rate{6, 3}) {
		t.Fatalf("unexpected defaults: %+v", p)
	}
	if p.Key != (PolicyKey{Namespace: "ns", Name: "p"}) {
		t.Fatalf("key %q", p.Key)
	}
	if p.MaxHold != DefaultMaxHold {
		t.Fatalf("maxHold %s, want %s", p.MaxHold, DefaultMaxHold)
	}
	never := mustCompile(t, elp("ns", "p", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.MaxHold = &metav1.Duration{} }))
	if never.MaxHold != 0 {
		t.Fatalf("maxHold 0s compiled to %s", never.MaxHold)
	}
}

func TestSelectAndCombine(t *testing.T) {
	def := DefaultPolicy(Defaults{MaxUnavailable: intstr.FromString("25%"), MaxFailing: intstr.FromString("50%"), RestartsPerMinute: 6, Burst: 3})
	web := mustCompile(t, elp("ns", "web", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
		s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		v := intstr.FromInt32(1)
		s.MaxUnavailable = &v
	}))
	all := mustCompile(t, elp("ns", "all", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
		v, f := intstr.FromString("50%"), intstr.FromString("20%")
		s.MaxUnavailable, s.MaxFailing = &v, &f
	}))
	dry := mustCompile(t, elp("other", "dry", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.Mode = policyv1alpha1.ModeDryRun }))
	trial := mustCompile(t, elp("trial", "shadow", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.Mode = policyv1alpha1.ModeShadow }))
	policies := []Policy{web, all, dry, trial}

	cases := []struct {
		name        string
		ns          string
		labels      map[string]string
		keys        string
		maxUnavail  int32 // for 10 replicas
		maxFailing  int32
		shadow      bool
		unavailFrom string
	}{
		{"both select: most restrictive wins", "ns", map[string]string{"app": "web"}, "ns/web,ns/all", 1, 2, false, "ns/web"},
		{"one selects", "ns", map[string]string{"app": "db"}, "ns/all", 5, 2, false, "ns/all"},
		// Policies that set no maxUnavailable leave the budget to the fallback (no PDB here).
		{"DryRun, Shadow's old name", "other", nil, "other/dry", 3, 5, true, ""},
		{"Shadow namespace", "trial", nil, "trial/shadow", 3, 5, true, ""},
		{"no policy: default", "empty", nil, "empty/<default>", 3, 5, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := Governing(Select(policies, def, c.ns, c.labels))
			var keys []string
			for i := range g {
				keys = append(keys, g[i].Key.String())
			}
			if got := strings.Join(keys, ","); got != c.keys {
				t.Fatalf("keys %s, want %s", got, c.keys)
			}
			// Only the policies that have a status count decisions there.
			withStatus := len(g)
			if g[0].IsDefault() {
				withStatus = 0
			}
			if got := g.WithStatus(); len(got) != withStatus {
				t.Fatalf("policies with a status: %v", got)
			}
			b := (&Facts{Policies: g}).Budget(10)
			from := ""
			if b.Policy != (PolicyKey{}) {
				from = b.Policy.String()
			}
			mf, _ := g.MaxFailing(10)
			_, sh := g.Shadow()
			if b.Max != c.maxUnavail || mf != c.maxFailing || sh != c.shadow || from != c.unavailFrom {
				t.Fatalf("got maxUnavailable %d (%s) maxFailing %d shadow %v", b.Max, b, mf, sh)
			}
		})
	}
}

func TestBlacklist(t *testing.T) {
	p := mustCompile(t, elp("ns", "p", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
		s.Blacklist = &policyv1alpha1.Blacklist{
			Workloads:   []policyv1alpha1.WorkloadReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "legacy"}},
			PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fragile": "true"}},
			Containers:  []string{"sidecar"},
		}
	}))
	empty := mustCompile(t, elp("ns", "e", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.Blacklist = &policyv1alpha1.Blacklist{} }))
	dep := func(name string) WorkloadRef {
		return WorkloadRef{APIVersion: "apps/v1", Kind: "Deployment", Name: name}
	}
	cases := []struct {
		name string
		p    Policy
		t    Target
		want bool
	}{
		{"workload by name", p, Target{Workload: dep("legacy"), Container: "app"}, true},
		{"workload other version same group", p, Target{Workload: WorkloadRef{APIVersion: "apps/v1beta2", Kind: "Deployment", Name: "legacy"}, Container: "app"}, true},
		{"workload other group", p, Target{Workload: WorkloadRef{APIVersion: "example.com/v1", Kind: "Deployment", Name: "legacy"}, Container: "app"}, false},
		{"workload other name", p, Target{Workload: dep("modern"), Container: "app"}, false},
		{"workload other kind", p, Target{Workload: WorkloadRef{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "legacy"}, Container: "app"}, false},
		{"pod selector", p, Target{Workload: dep("x"), PodLabels: map[string]string{"fragile": "true"}, Container: "app"}, true},
		{"pod selector no match", p, Target{Workload: dep("x"), PodLabels: map[string]string{"fragile": "false"}, Container: "app"}, false},
		{"container", p, Target{Workload: dep("x"), Container: "sidecar"}, true},
		{"empty blacklist matches nothing", empty, Target{Workload: dep("legacy"), PodLabels: map[string]string{"fragile": "true"}, Container: "sidecar"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got := Governing{c.p}.Blacklisted(c.t)
			if got != c.want {
				t.Fatalf("blacklisted = %v, want %v", got, c.want)
			}
		})
	}
}
