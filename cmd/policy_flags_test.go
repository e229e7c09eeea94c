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
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestPolicyFlags(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
	}{
		{nil, ""},
		{[]string{"--restarts=disabled", "--default-max-unavailable=2", "--global-restarts-per-minute=0"}, ""},
		{[]string{"--restarts=off"}, "--restarts: must be enabled or disabled"},
		{[]string{"--default-max-unavailable=120%"}, "--default-max-unavailable: must be an integer >= 0 or a percent"},
		{[]string{"--default-max-failing=-1"}, "--default-max-failing: must be an integer >= 0"},
		{[]string{"--node-storm-max-failing=half"}, "--node-storm-max-failing: must be an integer >= 0"},
		{[]string{"--storm-settle-period=-1s"}, "--storm-settle-period: must not be negative"},
		{[]string{"--default-max-hold=0s"}, ""},
		{[]string{"--default-max-hold=24h"}, ""},
		{[]string{"--default-max-hold=30s"}, "--default-max-hold: must be 0s (doubt holds never end) or between 1m and 24h, got 30s"},
		{[]string{"--default-max-hold=25h"}, "--default-max-hold: must be 0s (doubt holds never end) or between 1m and 24h, got 25h0m0s"},
	}
	for _, c := range cases {
		fs := flag.NewFlagSet("manager", flag.ContinueOnError)
		f := bindPolicyFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		_, err := f.config("ops")
		if c.wantErr == "" {
			if err != nil {
				t.Errorf("%v: %v", c.args, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.wantErr)
		}
	}

	args := []string{"--restarts=disabled", "--default-max-unavailable=2", "--default-burst=5", "--operator-namespace=ops"}
	c, err := parseFlags(t, args...).resolve()
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.policy
	if cfg.RestartsEnabled || cfg.Defaults.MaxUnavailable != intstr.FromInt32(2) ||
		cfg.Defaults.MaxFailing != intstr.FromString("50%") || cfg.Defaults.Burst != 5 ||
		cfg.GlobalRate.PerMinute != 60 || cfg.GlobalRate.Burst != 30 || cfg.OperatorNamespace != "ops" ||
		cfg.StormSettle != 30*time.Second {
		t.Fatalf("unexpected config %+v", cfg)
	}
	if h := cfg.Defaults.MaxHold; h == nil || *h != 10*time.Minute {
		t.Fatalf("default maxHold %v, want 10m", h)
	}
	c, err = parseFlags(t, "--default-max-hold=2h", "--operator-namespace=ops").resolve()
	if err != nil {
		t.Fatal(err)
	}
	if h := c.policy.Defaults.MaxHold; h == nil || *h != 2*time.Hour {
		t.Fatalf("maxHold %v, want 2h", h)
	}
}
