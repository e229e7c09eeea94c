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
	"bytes"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// parseFlags binds the manager's whole command line to a new flag set and parses args.
func parseFlags(t *testing.T, args ...string) *flags {
	t.Helper()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	f := bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// The operator namespace is resolved once, and every consumer gets that one: the pod webhook's
// namespace is the one the controllers, the daemon DaemonSet, the cache and the certificate use.
func TestOperatorNamespaceIsResolvedOnce(t *testing.T) {
	cases := []struct {
		name, env string
		args      []string
		want      string
		wantErr   string
	}{
		{name: "neither: the default", want: "enhanced-liveness-system"},
		{name: "the environment (downward API)", env: "from-env", want: "from-env"},
		{name: "the flag wins over the environment", env: "from-env", args: []string{"--operator-namespace=ops"},
			want: "ops"},
		{name: "empty", args: []string{"--operator-namespace="}, wantErr: "--operator-namespace: must be a namespace name"},
		{name: "not a namespace name", args: []string{"--operator-namespace=Ops_1"},
			wantErr: "--operator-namespace: must be a namespace name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", c.env)
			cfg, err := parseFlags(t, c.args...).resolve()
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for consumer, got := range map[string]string{
				"pod webhook and mapping controller": cfg.operatorNamespace,
				"decision controller (Leases)":       cfg.policy.OperatorNamespace,
				"daemon DaemonSet":                   cfg.daemon.Namespace,
				"cache":                              cfg.cache.OperatorNamespace,
				"webhook certificate":                cfg.certs.Namespace,
			} {
				if got != c.want {
					t.Errorf("%s: namespace %q, want %q", consumer, got, c.want)
				}
			}
		})
	}
}

func TestStripCachedObjectsFlag(t *testing.T) {
	for args, want := range map[string]bool{"": true, "--strip-cached-objects=false": false} {
		var a []string
		if args != "" {
			a = []string{args}
		}
		cfg, err := parseFlags(t, a...).resolve()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.cache.Strip != want {
			t.Errorf("%q: strip %v, want %v", args, cfg.cache.Strip, want)
		}
	}
}

func TestWebhooksOffSkipsTheCertificateFlags(t *testing.T) {
	t.Setenv("ENABLE_WEBHOOKS", "false")
	if _, err := parseFlags(t, "--cert-mode=none").resolve(); err != nil {
		t.Errorf("webhooks off: %v", err)
	}
	t.Setenv("ENABLE_WEBHOOKS", "")
	if _, err := parseFlags(t, "--cert-mode=none").resolve(); err == nil || !strings.HasPrefix(err.Error(), "--cert-mode:") {
		t.Errorf("webhooks on: got %v, want a --cert-mode error", err)
	}
}

// The manager logs for production unless told otherwise: JSON lines at info level; --zap-devel
// gives the console encoder and debug.
func TestManagerLogsJSONAtInfoByDefault(t *testing.T) {
	for _, c := range []struct {
		name      string
		args      []string
		json      bool
		debugging bool
	}{
		{name: "default", json: true},
		{name: "--zap-devel", args: []string{"--zap-devel"}, debugging: true},
		{name: "--zap-log-level=debug", args: []string{"--zap-log-level=debug"}, json: true, debugging: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := parseFlags(t, c.args...)
			var out bytes.Buffer
			log := zap.New(zap.UseFlagOptions(&f.zap), zap.WriteTo(&out))
			log.Info("an info line")
			log.V(1).Info("a debug line")
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if got := json.Valid([]byte(lines[0])); got != c.json {
				t.Errorf("first line %q: JSON %v, want %v", lines[0], got, c.json)
			}
			if got := strings.Contains(out.String(), "a debug line"); got != c.debugging {
				t.Errorf("debug line logged: %v, want %v (output %q)", got, c.debugging, out.String())
			}
		})
	}
}
