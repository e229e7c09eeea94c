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
	"slices"
	"strings"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
)

func TestDaemonFlags(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, c daemonset.Config)
	}{
		{name: "defaults are the DaemonSet's", check: func(t *testing.T, c daemonset.Config) {
			if !apiequality.Semantic.DeepEqual(c.Resources, daemonset.DefaultResources()) {
				t.Errorf("resources = %v, want %v", c.Resources, daemonset.DefaultResources())
			}
			if c.MetricsPort != daemonset.DefaultMetricsPort || c.HealthPort != daemonset.DefaultHealthPort ||
				len(c.ExtraArgs) != 0 {
				t.Errorf("config = %+v", c)
			}
		}},
		{
			name: "daemon flags, resources and ports",
			args: []string{"--daemon-arg=--memory-limit=128Mi", "--daemon-arg", "--zap-log-level=debug",
				"--daemon-requests=cpu=50m,memory=96Mi", "--daemon-limits=memory=384Mi",
				"--daemon-metrics-port=11290", "--daemon-health-port=11291"},
			check: func(t *testing.T, c daemonset.Config) {
				if !slices.Equal(c.ExtraArgs, []string{"--memory-limit=128Mi", "--zap-log-level=debug"}) {
					t.Errorf("args = %q", c.ExtraArgs)
				}
				if q := c.Resources.Requests.Cpu(); q.Cmp(resource.MustParse("50m")) != 0 {
					t.Errorf("cpu request = %s", q)
				}
				if _, ok := c.Resources.Limits["cpu"]; ok || len(c.Resources.Limits) != 1 {
					t.Errorf("limits = %v, want memory only", c.Resources.Limits)
				}
				if c.MetricsPort != 11290 || c.HealthPort != 11291 {
					t.Errorf("ports = %d, %d", c.MetricsPort, c.HealthPort)
				}
			},
		},
		{name: "no requests at all", args: []string{"--daemon-requests="}, check: func(t *testing.T, c daemonset.Config) {
			if len(c.Resources.Requests) != 0 {
				t.Errorf("requests = %v", c.Resources.Requests)
			}
		}},
		{name: "unknown daemon flag", args: []string{"--daemon-arg=--memory=1Gi"},
			wantErr: `--daemon-arg: daemon argument "--memory=1Gi": the daemon has no flag --memory`},
		{name: "daemon flag the manager sets", args: []string{"--daemon-arg=--cri-endpoint=unix:///x.sock"},
			wantErr: "--daemon-arg: daemon argument \"--cri-endpoint=unix:///x.sock\": --cri-endpoint is set by the manager"},
		{name: "bad daemon value", args: []string{"--daemon-arg=--cri-timeout=never"},
			wantErr: `--daemon-arg: daemon argument "--cri-timeout=never": invalid value "never" for flag -cri-timeout`},
		{name: "unknown resource", args: []string{"--daemon-limits=gpu=1"},
			wantErr: `--daemon-limits: "gpu=1": unknown resource "gpu"`},
		{name: "no quantity", args: []string{"--daemon-requests=cpu"},
			wantErr: `--daemon-requests: "cpu": want name=quantity`},
		{name: "bad quantity", args: []string{"--daemon-requests=cpu=fast"}, wantErr: `--daemon-requests: "cpu=fast"`},
		{name: "request above limit", args: []string{"--daemon-requests=memory=1Gi"},
			wantErr: "--daemon-requests, --daemon-limits: daemon memory request 1Gi is above its limit 256Mi"},
		{name: "port out of range", args: []string{"--daemon-metrics-port=70000"},
			wantErr: "--daemon-metrics-port: 70000 is not a port"},
		{name: "same ports", args: []string{"--daemon-health-port=10290"}, wantErr: "both are 10290"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			f := bindPackagingFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			c, err := f.daemonConfig("ns")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestFormatResourcesRoundTrip(t *testing.T) {
	def := daemonset.DefaultResources()
	for _, l := range []string{formatResources(def.Requests), formatResources(def.Limits)} {
		got, err := parseResources(l)
		if err != nil || formatResources(got) != l {
			t.Errorf("parseResources(%q) = %v, %v", l, got, err)
		}
	}
	if s := formatResources(def.Limits); s != "cpu=500m,memory=256Mi" {
		t.Errorf("default limits = %q", s)
	}
}
