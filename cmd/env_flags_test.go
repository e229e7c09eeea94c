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
)

func TestFlagsFromEnv(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		env     []string
		wantErr string
		check   func(t *testing.T, p *packagingFlags, s *scaleFlags)
	}{
		{
			name: "environment sets flags the command line left alone",
			env: []string{"PATH=/bin", "ELO_DAEMON_ARG=--memory-limit=128Mi  --zap-log-level=debug",
				"ELO_KUBE_API_QPS=50", "ELO_STRIP_CACHED_OBJECTS=false", "ELO_DAEMON_LIMITS=memory=512Mi"},
			check: func(t *testing.T, p *packagingFlags, s *scaleFlags) {
				if !slices.Equal(p.daemon.args, stringList{"--memory-limit=128Mi", "--zap-log-level=debug"}) {
					t.Errorf("daemon args = %q", p.daemon.args)
				}
				if s.kubeAPIQPS != 50 || s.stripCache || p.daemon.limits != "memory=512Mi" {
					t.Errorf("qps %v, strip %v, limits %q", s.kubeAPIQPS, s.stripCache, p.daemon.limits)
				}
			},
		},
		{
			name: "the command line wins",
			args: []string{"--kube-api-qps=10", "--daemon-arg=--cri-timeout=5s"},
			env:  []string{"ELO_KUBE_API_QPS=50", "ELO_DAEMON_ARG=--memory-limit=128Mi"},
			check: func(t *testing.T, p *packagingFlags, s *scaleFlags) {
				if s.kubeAPIQPS != 10 || !slices.Equal(p.daemon.args, stringList{"--cri-timeout=5s"}) {
					t.Errorf("qps %v, daemon args %q", s.kubeAPIQPS, p.daemon.args)
				}
			},
		},
		{
			name: "other variables are not read",
			env:  []string{"KUBE_API_QPS=1", "RELATED_IMAGE_DAEMON=x", "ELO=1"},
			check: func(t *testing.T, _ *packagingFlags, s *scaleFlags) {
				if s.kubeAPIQPS != defaultKubeAPIQPS {
					t.Errorf("qps = %v", s.kubeAPIQPS)
				}
			},
		},
		{name: "unknown variable", env: []string{"ELO_KUBE_API_QSP=5"},
			wantErr: "ELO_KUBE_API_QSP: no manager flag is called that"},
		{name: "bad value", env: []string{"ELO_DECISION_WORKERS=many"},
			wantErr: `ELO_DECISION_WORKERS="many" (--decision-workers): parse error`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			p := bindPackagingFlags(fs)
			s := bindScaleFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := flagsFromEnv(fs, tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, p, s)
		})
	}
}

func TestEnvName(t *testing.T) {
	for flagName, want := range map[string]string{
		"daemon-arg": "ELO_DAEMON_ARG", "zap-log-level": "ELO_ZAP_LOG_LEVEL", "kube-api-qps": "ELO_KUBE_API_QPS",
	} {
		if got := envName(flagName); got != want {
			t.Errorf("envName(%q) = %q, want %q", flagName, got, want)
		}
	}
}
