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

	"k8s.io/client-go/rest"
)

func parseScaleFlags(t *testing.T, args ...string) *scaleFlags {
	t.Helper()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	f := bindScaleFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestScaleFlagsRateLimit(t *testing.T) {
	cases := []struct {
		args      []string
		wantQPS   float32
		wantBurst int
		wantErr   string
	}{
		{nil, defaultKubeAPIQPS, defaultKubeAPIBurst, ""},
		{[]string{"--kube-api-qps=50", "--kube-api-burst=75"}, 50, 75, ""},
		{[]string{"--kube-api-qps=-1"}, -1, defaultKubeAPIBurst, ""},
		{[]string{"--kube-api-qps=0"}, 0, 0, "--kube-api-qps: must be greater than 0, or -1"},
		{[]string{"--kube-api-qps=-5"}, 0, 0, "--kube-api-qps: must be greater than 0, or -1"},
		{[]string{"--kube-api-burst=0"}, 0, 0, "--kube-api-burst: must be at least 1"},
		{[]string{"--decision-workers=0"}, 0, 0, "--decision-workers: must be at least 1"},
		{[]string{"--memory-limit=768Mi"}, defaultKubeAPIQPS, defaultKubeAPIBurst, ""},
		{[]string{"--memory-limit=0"}, defaultKubeAPIQPS, defaultKubeAPIBurst, ""},
		{[]string{"--memory-limit=lots"}, 0, 0, `--memory-limit "lots": must be auto, 0 or a quantity`},
		{[]string{"--memory-limit=-1Gi"}, 0, 0, `--memory-limit "-1Gi": must not be negative`},
	}
	for _, c := range cases {
		cfg := &rest.Config{}
		err := parseScaleFlags(t, c.args...).applyTo(cfg)
		if c.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
				t.Errorf("%v: got %v, want %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil || cfg.QPS != c.wantQPS || cfg.Burst != c.wantBurst {
			t.Errorf("%v: QPS %v burst %d err %v, want %v %d", c.args, cfg.QPS, cfg.Burst, err, c.wantQPS, c.wantBurst)
		}
	}
}
