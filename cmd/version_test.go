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
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// The version make build and the images stamp (hack/version.sh ldflags) is what the manager
// reports: --version, the build-info metric, and the User-Agent of its API client, which the API
// server records as the field manager of what the manager creates.
func TestManagerBinaryReportsItsStampedVersion(t *testing.T) {
	const v = "9.8.7-test.1"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	script := exec.CommandContext(ctx, "../hack/version.sh", "ldflags")
	script.Env = append(os.Environ(), "VERSION=v"+v, "GIT_REVISION=0123456789ab")
	ldflags, err := script.Output()
	if err != nil {
		t.Fatalf("hack/version.sh ldflags: %v", err)
	}
	bin := buildManager(ctx, t, strings.TrimSpace(string(ldflags)))

	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("manager --version: %v\n%s", err, out)
	}
	want := fmt.Sprintf("enhanced-liveness-manager %s (revision 0123456789ab, %s, %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if string(out) != want {
		t.Errorf("manager --version printed %q, want %q", out, want)
	}

	env, c := testutil.StartEnvironment(t, "mpod-v1.kb.io")
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	wo := env.WebhookInstallOptions
	startManagerBinary(ctx, t, env, bin, "--operator-namespace=default", "--cert-mode=olm",
		"--webhook-cert-path="+wo.LocalServingCertDir, fmt.Sprintf("--webhook-port=%d", wo.LocalServingPort),
		"--metrics-bind-address="+metricsAddr, "--metrics-secure=false")

	buildInfo := regexp.MustCompile(`(?m)^enhanced_liveness_build_info\{(.*)\} 1$`)
	var metrics string
	waitFor(ctx, t, "the build-info metric", func() bool {
		metrics = scrape(ctx, "http://"+metricsAddr+"/metrics")
		return buildInfo.MatchString(metrics)
	})
	labels := buildInfo.FindStringSubmatch(metrics)[1]
	wantLabels := fmt.Sprintf(`goversion="%s",revision="0123456789ab",version="%s"`, runtime.Version(), v)
	if labels != wantLabels {
		t.Errorf("enhanced_liveness_build_info{%s}, want {%s}", labels, wantLabels)
	}

	// The API server names the field manager of a create after the User-Agent's product token.
	key := client.ObjectKey{Namespace: "default", Name: signature.DefaultSecretName}
	secret := &corev1.Secret{}
	waitFor(ctx, t, "the signing key Secret", func() bool { return c.Get(ctx, key, secret) == nil })
	var managers []string
	for _, m := range secret.ManagedFields {
		managers = append(managers, m.Manager)
	}
	if len(managers) == 0 || managers[0] != "enhanced-liveness-manager" {
		t.Errorf("field managers of the Secret the manager created: %v, want enhanced-liveness-manager "+
			"(the product token of its User-Agent)", managers)
	}
}

// --version is a command: the environment cannot set it (ELO_VERSION is refused, naming itself).
func TestVersionFlagHasNoEnvironmentVariable(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	bindFlags(fs)
	if err := flagsFromEnv(fs, []string{"ELO_VERSION=true"}); err == nil || !strings.Contains(err.Error(), "ELO_VERSION") {
		t.Errorf("ELO_VERSION=true: err = %v, want an error naming ELO_VERSION", err)
	}
}

func scrape(ctx context.Context, url string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
