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

package quickstart

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// The page holds exactly one quick start block, and it does what the page promises: push both
// images, deploy with make and kubectl, enroll through the pod template, check, restart, hold
// restarts in a storm and end the hold, remove.
func TestInstallPageBlock(t *testing.T) {
	page, err := os.ReadFile("../../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	block, err := ExtractBlock(string(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"make image-push IMG=$REGISTRY/", "make sample-image-push SAMPLE_IMG=$REGISTRY/", "make deploy IMG=",
		"  template:\n    metadata:\n      labels: {app: hello}\n" +
			"      annotations:\n        enhancedliveness.io/enabled: \"true\"",
		"kind: EnhancedLivenessPolicy", "  mode: Shadow\n", "enhancedliveness\\.io/mode}'=Shadow", "/app sick", "restartCount}'=1",
		"status.figures", `{"spec":{"mode":"Enforce"}}`, "rollout restart deploy/hello", "--for=condition=StormDetected ", "get restartholds", "--for=condition=StormDetected=false",
		"make undeploy",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("the quick start block has no %q:\n%s", want, block)
		}
	}
	for _, banned := range []string{"KUBECTL=", "bin/k8s", "localhost/"} {
		if strings.Contains(block, banned) {
			t.Errorf("the quick start block uses %q, which a user on their own cluster does not have", banned)
		}
	}
}

func TestExtractBlock(t *testing.T) {
	const good = "text\n<!-- quickstart:begin (note) -->\n```sh\necho one\necho two\n```\n<!-- quickstart:end -->\nmore"
	got, err := ExtractBlock(good)
	if err != nil || got != "echo one\necho two\n" {
		t.Fatalf("ExtractBlock = %q, %v", got, err)
	}
	for name, page := range map[string]string{
		"no marker":   "```sh\necho\n```",
		"no end":      "<!-- quickstart:begin -->\n```sh\necho\n```\n",
		"two blocks":  "<!-- quickstart:begin -->\n```sh\na\n```\n```sh\nb\n```\n<!-- quickstart:end -->",
		"prose":       "<!-- quickstart:begin -->\nrun this:\n```sh\na\n```\n<!-- quickstart:end -->",
		"two markers": good + "\n" + good,
		"not sh":      "<!-- quickstart:begin -->\n```yaml\na: b\n```\n<!-- quickstart:end -->",
	} {
		if _, err := ExtractBlock(page); err == nil {
			t.Errorf("%s: ExtractBlock accepted %q", name, page)
		}
	}
}

// The spec must fail when any step of the block fails, wherever the step is.
func TestRunBlockStopsAtTheFirstFailingStep(t *testing.T) {
	env, err := UserEnv(t.TempDir(), map[string]string{"GREETING": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := RunBlock(context.Background(), "echo \"$GREETING\"\ntrue\n", t.TempDir(), env, &out); err != nil {
		t.Fatalf("a passing block failed: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "hello") {
		t.Errorf("output %q lacks the block's own output", out.String())
	}
	for name, block := range map[string]string{
		"a failing command":       "echo before\nfalse\necho after\n",
		"a failing pipe":          "false | cat\necho after\n",
		"a failing substitution":  "X=$(false)\necho after\n",
		"an unset variable":       "echo $NOT_SET_ANYWHERE\necho after\n",
		"a failing heredoc input": "cat <<EOF | grep -q nothing-like-this\nsome text\nEOF\necho after\n",
	} {
		out.Reset()
		err := RunBlock(context.Background(), block, t.TempDir(), env, &out)
		if err == nil || strings.Contains(out.String(), "\nafter\n") {
			t.Errorf("%s: error %v, output %q: want an error before \"after\"", name, err, out.String())
		}
	}
}

// Nothing of the harness's environment reaches the block but what a user has.
func TestUserEnv(t *testing.T) {
	t.Setenv("KUBECTL", "/somewhere/kubectl")
	t.Setenv("E2E_APP_IMAGE", "x")
	env, err := UserEnv("/tmp/kubectl-dir", map[string]string{"KUBECONFIG": "/k"})
	if err != nil {
		t.Fatal(err)
	}
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, banned := range []string{"\nKUBECTL=", "\nE2E_APP_IMAGE="} {
		if strings.Contains(joined, banned) {
			t.Errorf("UserEnv passes %s", strings.TrimSpace(banned))
		}
	}
	if !strings.Contains(joined, "\nPATH=/tmp/kubectl-dir:") || !strings.Contains(joined, "\nKUBECONFIG=/k\n") {
		t.Errorf("UserEnv = %v", env)
	}
}
