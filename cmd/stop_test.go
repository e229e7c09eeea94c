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
	"context"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// manager stop's flags: the defaults the chart's hook relies on, and a bad value named with its rule.
func TestStopFlags(t *testing.T) {
	cases := []struct {
		name, env string
		args      []string
		wantErr   []string
		want      stopFlags
	}{
		{name: "defaults", want: stopFlags{namespace: "enhanced-liveness-system",
			deployment: "enhanced-liveness-operator-controller-manager", timeout: 2 * time.Minute}},
		{name: "the namespace from the environment", env: "ops", want: stopFlags{namespace: "ops",
			deployment: "enhanced-liveness-operator-controller-manager", timeout: 2 * time.Minute}},
		{name: "every flag", env: "ops", args: []string{"--namespace=sys", "--manager-deployment=m", "--timeout=30s"},
			want: stopFlags{namespace: "sys", deployment: "m", timeout: 30 * time.Second}},
		{name: "bad values, each named", args: []string{"--namespace=Sys_1", "--manager-deployment=", "--timeout=0s"},
			wantErr: []string{"--namespace: must be a namespace name", "--manager-deployment: must be a Deployment name",
				"--timeout: must be positive, got 0s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", c.env)
			fs := flag.NewFlagSet("stop", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := bindStopFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			err := f.validate()
			if len(c.wantErr) > 0 {
				for _, w := range c.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("got %v, want %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.namespace != c.want.namespace || f.deployment != c.want.deployment || f.timeout != c.want.timeout {
				t.Errorf("got %s/%s %s, want %s/%s %s", f.namespace, f.deployment, f.timeout,
					c.want.namespace, c.want.deployment, c.want.timeout)
			}
		})
	}
}

// A stray argument is refused before anything is read or written.
func TestStopRefusesArguments(t *testing.T) {
	err := runStop(context.Background(), []string{"--namespace=ops", "now"})
	if err == nil || !strings.Contains(err.Error(), `takes no arguments, got ["now"]`) {
		t.Fatalf("got %v", err)
	}
}
